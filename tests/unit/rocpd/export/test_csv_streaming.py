"""The CSV set in bounded memory: rows formatted by SQLite and written a chunk at a time, as
csv.writer (QUOTE_NONNUMERIC) would write them, whatever the values' types."""

from __future__ import annotations

import csv
import io
import sqlite3
import tracemalloc

import rocpd
from rocpd.export import csv as csv_export
from rocpd.testing import CPU_AGENT, DatabaseBuilder, gpu_agent

ROWS = 200_000


def _table(path, prefix: str) -> str:
    con = sqlite3.connect(path)
    try:
        return next(n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    if n.startswith(prefix + "_"))
    finally:
        con.close()


def test_memory_is_bounded_whatever_the_rows(tmp_path):
    # Holding the kernel table took ~700 bytes a row (10M rows: 7 GB); a chunk is a few MB.
    path = str(tmp_path / "big.db")
    with DatabaseBuilder(path) as b:
        b.kernels_bulk([(f"kernel_{i % 50}", i * 1_000, i * 1_000 + 500) for i in range(ROWS)])
        for i in range(2_000):
            b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", i * 100, i * 100 + 50, 64, src_agent=CPU_AGENT)
            b.region("HIP_RUNTIME_API", "hipLaunchKernel", i * 100, i * 100 + 10)
    with rocpd.connect(path) as db:
        tracemalloc.start()
        try:
            written = csv_export.write(db, str(tmp_path / "out" / "r"), guid=True, stats=False)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    kernels = next(p for p in written if p.endswith("_kernel_trace.csv"))
    with open(kernels, newline="") as fh:
        assert sum(1 for _ in fh) == ROWS + 1
    assert any(p.endswith("_hip_api_trace.csv") for p in written)
    assert peak < ROWS * 700 / 10, f"peak {peak / 1e6:.1f} MB of Python objects for {ROWS} rows"


def _odd(path) -> str:
    with DatabaseBuilder(path, gpus=2) as b:
        b.marker('step "1",\r\nnext', 1_000, 90_000)
        b.marker("mark", 1_500, 1_500)
        b.region("HIP_RUNTIME_API", "hipLaunchKernel", 2_000, 2_050)
        for i in range(12):
            b.kernel('gemm "q", ünï' if i % 3 == 0 else f"k{i % 2}", 3_000 + (i // 2) * 10,
                     3_005 + i * 10, agent=gpu_agent(i % 2))
        b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", 6_000, 6_100, 64, src_agent=CPU_AGENT)
    k = _table(path, "rocpd_kernel_dispatch")
    con = sqlite3.connect(path)
    for n, assignment in enumerate(["stream_id = 1.5", "grid_size_y = x'00ff22'", "agent_id = 999",
                                    "workgroup_size_z = 1e300", "dispatch_id = 'text\"id'",
                                    "workgroup_size_y = 0.1",
                                    "private_segment_size = -9223372036854775808",
                                    "dispatch_id = 9223372036854775807"]):
        con.execute(f"UPDATE {k} SET {assignment} WHERE id = (SELECT min(id) + {n} FROM {k})")
    # A queue handle of 2.0: a real the column's INTEGER affinity would have made 2.
    con.execute(f"UPDATE {_table(path, 'rocpd_info_queue')} SET extdata = '{{\"hsa_queue_id\": 2.0}}'")
    con.commit()
    con.close()
    return str(path)


def _as_csv_writer_writes(conn, sql: str, first: int) -> str:
    buf = io.StringIO(newline="")
    csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC).writerows(r[first:] for r in conn.execute(sql))
    return buf.getvalue()


def test_cells_are_what_csv_writer_writes(tmp_path):
    # Reals (SQLite's text of 0.1 or 2.0 is not Python's), blobs, NULLs, quotes, line breaks and
    # 64-bit extremes, in the rows of each file, with and without the Guid column.
    path = _odd(tmp_path / "odd.db")
    for guid in (True, False):
        out = tmp_path / f"out{guid}"
        with rocpd.connect(path) as db:
            csv_export.write(db, str(out / "r"), guid=guid, stats=False)
            conn = db.sources()[0].conn
            first = 0 if guid else 1
            for stem, sql in (("kernel", csv_export._KERNEL_SQL),
                              ("memory_copy", csv_export._COPY_SQL)):
                with open(out / f"r_{stem}_trace.csv", newline="") as fh:
                    fh.readline()
                    got = fh.read()
                assert got == _as_csv_writer_writes(conn, sql.format(w="1"), first), stem
            with open(out / "r_kernel_trace.csv", newline="") as fh:
                text = fh.read()
    assert ",1.5," in text and ",1e+300," in text and ",0.1," in text and ',"text""id",' in text
    assert ",2.0," in text and ",-9223372036854775808," in text and "\"b'\\x00\\xff\"\"'\"" in text


def test_counter_collection_is_written_a_chunk_at_a_time(tmp_path, monkeypatch):
    # A row per dispatch and counter (~700 bytes each held as a row); chunks of 200 here, so the
    # file's 10k rows would show as ~7 MB if they were read whole.
    from rocpd.counters import pmc

    monkeypatch.setattr(pmc, "_CHUNK", 200)
    path = str(tmp_path / "pmc.db")
    with DatabaseBuilder(path) as b:
        for i in range(10_000):
            b.counter_value(b.kernel(f"k{i % 3}", 1_000 + i * 10, 1_005 + i * 10), "SQ_WAVES", i)
    with rocpd.connect(path) as db:
        tracemalloc.start()
        try:
            name = pmc.write_counter_collection(db, str(tmp_path / "out" / "r"), guid=True)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    with open(name, newline="") as fh:
        assert sum(1 for _ in fh) == 10_001
    assert peak < 2_000_000, f"peak {peak / 1e6:.1f} MB of Python objects for 10k counter rows"
