"""Per-dispatch hardware counters as the writer stores them (rocpd_info_pmc + rocpd_pmc_event keyed
to the dispatch's event, as rocprofv3 stores them) and as rocpd reads them back: ROCm's views,
the per-kernel table of `rocpd summary`, rocprofv3's counter_collection.csv."""

from __future__ import annotations

import csv
import re

import pytest

import rocpd
from rocpd.counters import pmc
from rocpd.testing import DatabaseBuilder


def _db(path):
    """Two kernels, three dispatches; values arrive before, after, and between dispatches."""
    with DatabaseBuilder(path, pid=777) as b:
        b.counter("dram__bytes_read.sum", description="# of bytes read from DRAM", units="byte")
        c1 = b.next_correlation()
        b.counter_value(c1, "dram__bytes_read.sum", 4096.0)  # before its dispatch
        b.counter_value(c1, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.5)
        b.kernel("copy_kernel", 1000, 2000, correlation_id=c1)
        c2 = b.kernel("copy_kernel", 3000, 4000)
        b.counter_value(c2, "dram__bytes_read.sum", 8192.0)  # after it
        b.counter_value(c2, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 12.25)
        c3 = b.kernel("gemm", 5000, 9000)
        b.counter_value(c3, "dram__bytes_read.sum", 1e9)
        b.counter_value(c3, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 80.0)
        b.counter_value(999, "dram__bytes_read.sum", 1.0)  # its dispatch never comes
    return path


@pytest.fixture
def counters_db(tmp_path):
    return str(_db(tmp_path / "777_results.db"))


def test_values_are_stored_against_their_dispatch(counters_db):
    with rocpd.connect(counters_db) as db:
        rows = db.execute("SELECT dispatch_id, counter_name, counter_value FROM pmc_events"
                          " ORDER BY dispatch_id, counter_name").fetchall()
        assert rows == [(1, "dram__bytes_read.sum", 4096.0),
                        (1, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.5),
                        (2, "dram__bytes_read.sum", 8192.0),
                        (2, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 12.25),
                        (3, "dram__bytes_read.sum", 1e9),
                        (3, "sm__throughput.avg.pct_of_peak_sustained_elapsed", 80.0)]
        # Every pmc_event row points at the kernel dispatch's own event (no dangling ids that
        # ROCm's INNER JOINs would hide), and counters_collection sees all of them.
        dangling = db.execute("SELECT count(*) FROM rocpd_pmc_event PE WHERE NOT EXISTS (SELECT 1"
                              " FROM rocpd_kernel_dispatch K WHERE K.event_id = PE.event_id)").fetchone()
        assert dangling == (0,)
        assert db.execute("SELECT count(*) FROM counters_collection").fetchone() == (6,)
        info = db.execute("SELECT name, symbol, component, value_type, agent_id FROM rocpd_info_pmc"
                          " ORDER BY id").fetchall()
        assert info[0] == ("dram__bytes_read.sum", "dram__bytes_read.sum", "cupti", "ABS", 2)
        meta = dict((k, v) for _, k, v in db.metadata())
        assert meta["rocprof.counters.unmatched_values"] == "1"


def test_per_dispatch_and_per_kernel_tables(counters_db):
    with rocpd.connect(counters_db) as db:
        wide = pmc.per_dispatch(db)
        assert list(wide["dispatch_id"]) == [1, 2, 3]
        assert list(wide["dram__bytes_read.sum"]) == [4096.0, 8192.0, 1e9]
        table = pmc.kernel_counters(db)
    copy = table[(table["Name"] == "copy_kernel") & (table["Counter"] == "dram__bytes_read.sum")].iloc[0]
    assert (copy["Dispatches"], copy["Mean"], copy["Min"], copy["Max"], copy["Total"]) == \
        (2, 6144.0, 4096.0, 8192.0, 12288.0)
    assert table["Name"].iloc[0] == "gemm"  # longest total time first


def test_summary_prints_the_counter_table(counters_db, cli):
    rc, out, _ = cli("summary", counters_db)
    assert rc == 0
    block = out[out.index("== COUNTER_COLLECTION"):]
    assert re.search(r"copy_kernel\s+\(2 dispatches\)", block)
    assert re.search(r"dram__bytes_read\.sum\s+6,144\s+\[4,096, 8,192\]", block)
    rc, only, _ = cli("summary", counters_db, "--domain", "counter_collection")
    assert rc == 0 and "KERNEL_DISPATCH_STATS" not in only and "COUNTER_COLLECTION" in only


def test_counter_collection_csv_as_rocprofv3_writes_it(counters_db, tmp_path, cli):
    rc, out, err = cli("convert", counters_db, "-f", "csv", "-d", tmp_path / "out", "-o", "run")
    assert rc == 0, err
    path = tmp_path / "out" / "run_counter_collection.csv"
    text = path.read_text().splitlines()
    # rocpd convert writes ROCm's rocpd columns: a first "Pid" column holding the guid (csv.cpp);
    # the rest as rocprofv3 writes them.
    guid = next(csv.reader([text[1]]))[0]
    assert len(guid) == 36
    text = [line.split(",", 1)[1] for line in text]
    assert text[0] == ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id",'
                       '"Thread_Id","Grid_Size","Kernel_Id","Kernel_Name","Workgroup_Size",'
                       '"LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count",'
                       '"SGPR_Count","Counter_Name","Counter_Value","Start_Timestamp",'
                       '"End_Timestamp"')
    # Strings quoted, numbers bare; values >= 1 fixed with 6 decimals, below 1 scientific with 8
    # (rocprofiler-sdk csv.hpp numerical_formatter).
    assert text[1] == ('1,1,"Agent 0",0,777,777,1024,1,"copy_kernel",256,0,0,32,0,16,'
                       '"dram__bytes_read.sum",4096.000000,1000,2000')
    assert text[2].endswith('"sm__throughput.avg.pct_of_peak_sustained_elapsed",5.00000000e-01,1000,2000')
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 6
    assert {r["Counter_Value"] for r in rows if r["Kernel_Name"] == "gemm"} == \
        {"1000000000.000000", "80.000000"}


def test_csv_value_format():
    assert pmc.csv_value(1) == "1.000000"
    assert pmc.csv_value(0) == "0.00000000e+00"
    assert pmc.csv_value(123456789.125) == "123456789.125000"
    assert pmc.csv_value(1.5e-7) == "1.50000000e-07"
    assert pmc.csv_value(-3) == "-3.00000000e+00"  # rocprofv3 tests v >= 1, so negatives go scientific
    assert pmc.csv_value(float("nan")) == "nan"


def test_no_counters_writes_no_counter_csv(tmp_path, cli):
    with DatabaseBuilder(tmp_path / "plain.db") as b:
        b.kernel("k", 0, 10)
    rc, _, _ = cli("convert", tmp_path / "plain.db", "-f", "csv", "-d", tmp_path / "out", "-o", "p")
    assert rc == 0
    assert not (tmp_path / "out" / "p_counter_collection.csv").exists()
    assert (tmp_path / "out" / "p_kernel_trace.csv").exists()


def _device_metric_value(path, guid, value):
    """A sampled device metric as the metrics backend stores it (rocprof-sys's layout), written
    with plain SQL into a closed fixture: a rocpd_info_pmc row and a rocpd_pmc_event on the last
    sample's event."""
    import sqlite3

    suffix = "_" + guid.replace("-", "_")
    con = sqlite3.connect(path)
    (pmc_id,) = con.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM rocpd_info_pmc{suffix}").fetchone()
    con.execute(f"INSERT INTO rocpd_info_pmc{suffix} (id, nid, pid, agent_id, target_arch,"
                f" event_code, instance_id, name, symbol, description, long_description, component,"
                f" units, value_type, block, expression, is_constant, is_derived, extdata)"
                f" SELECT ?, nid, pid, 2, 'GPU', 0, 0, 'device_busy_gfx', 'GPU_UTIL', 'busy',"
                f" '', 'nvml', '%', 'ABS', '', '', 0, 0, '{{}}' FROM rocpd_info_process{suffix}",
                (pmc_id,))
    (ev,) = con.execute(f"SELECT MAX(event_id) FROM rocpd_sample{suffix}").fetchone()
    con.execute(f"INSERT INTO rocpd_pmc_event{suffix} (event_id, pmc_id, value, extdata)"
                f" VALUES (?, ?, ?, '{{}}')", (ev, pmc_id, value))
    con.commit()
    con.close()


def test_device_metrics_and_dispatch_counters_share_the_tables(tmp_path):
    """Sampled device metrics (--process-freq) and per-dispatch counters (--pmc) both live in
    rocpd_info_pmc/rocpd_pmc_event: each reader keeps to its own (a sample's event vs a
    dispatch's), and a database with only samples has no per-dispatch counters."""
    from rocpd.device_metrics import samples as metrics

    path = tmp_path / "both.db"
    with DatabaseBuilder(path) as b:
        corr = b.kernel("gemm", 1000, 5000)
        b.counter_value(corr, "dram__bytes_read.sum", 4096.0)
        b.sample("gpu", 2000, category="DEVICE_METRIC")
    _device_metric_value(path, b.guid, 55.0)
    with rocpd.connect(str(path)) as db:
        assert pmc.has_counters(db)
        df = pmc.counters(db)
        assert list(df["counter_name"]) == ["dram__bytes_read.sum"] and list(df["value"]) == [4096.0]
        s = metrics.samples(db)
        assert list(s["metric"]) == ["device_busy_gfx"] and list(s["value"]) == [55.0]
    only = tmp_path / "samples_only.db"
    with DatabaseBuilder(only) as b:
        b.kernel("gemm", 1000, 5000)
        b.sample("gpu", 2000, category="DEVICE_METRIC")
    _device_metric_value(only, b.guid, 10.0)
    with rocpd.connect(str(only)) as db:
        assert len(metrics.samples(db)) == 1
        assert not pmc.has_counters(db)
