"""The report's memory with many distinct ROCTx range names: the per-name table and the steps are
computed with a few integers per range (no hash table or dict of every range), the timeline's
largest string stays one byte per character, and the page is written in pieces. The numbers are
those of the plain pandas computation."""

from __future__ import annotations

import os
import random
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import rocpd
from rocpd import report
from rocpd.analysis import analyze, attribution, steps
from rocpd.testing import DatabaseBuilder

T = 1_000_000


@pytest.fixture(scope="module")
def distinct_names(tmp_path_factory):
    """20k ROCTx ranges, each with its own name, recorded by rocprof run."""
    from tests.support import run_rocprof

    d = tmp_path_factory.mktemp("names")
    script = d / "names.py"
    script.write_text("import roctx\nfor i in range(20_000):\n"
                      "    with roctx.range(f'range_{i:07d}'):\n        pass\n")
    r = run_rocprof("run", "-d", d, "-o", "n", script)
    assert r.returncode == 0, r.stderr
    return str(d / "n_results.db")


def _mixed(path, seed):
    """Ranges on three threads with repeated, numbered and duplicated names, nested ranges and
    kernels launched inside some of them."""
    rnd = random.Random(seed)
    with DatabaseBuilder(path, pid=100 + seed) as b:
        t = T
        for i in range(150):
            tid = rnd.choice([1, 2, 3])
            s = t + rnd.randint(0, 50)
            e = s + rnd.randint(1, 500)
            name = rnd.choice(["step", f"step {i}", "other", "x é", f"u{i % 7}"])
            b.marker(name, s, e, tid=tid)
            if rnd.random() < 0.2:  # the same span recorded twice, under another name
                b.marker(rnd.choice(["step", f"step {i + 1000}"]), s, e, tid=tid)
            if rnd.random() < 0.3:
                b.marker("inner", s + 1, s + 2 + rnd.randint(0, 100), tid=tid)
            if rnd.random() < 0.6:
                b.kernel(rnd.choice(["k1", "k2"]), s + 1, s + 1 + rnd.choice([100, 200]), tid=tid)
            t = s + rnd.randint(0, 400)
    return str(path)


def _groupby_ranges(procs):
    """The per-name table as a pandas groupby makes it (the reference)."""
    rows, total = [], 0
    for p in procs:
        total += int(p.gpu["duration"].sum()) if len(p.gpu) else 0
        r = p.ranges
        gpu_ns = np.zeros(len(r), dtype=np.int64)
        ops = np.zeros(len(r), dtype=np.int64)
        if len(p.gpu):
            attribution._work_inside(p, r, gpu_ns, ops)
        rows.append(pd.DataFrame({"Range": r["name"], "host": r["end"] - r["start"],
                                  "gpu": gpu_ns, "ops": ops}))
    d = pd.concat(rows, ignore_index=True)
    out = d.groupby("Range", sort=False).agg(Instances=("host", "size"), HostNs=("host", "sum"),
                                             GpuTimeNs=("gpu", "sum"), Ops=("ops", "sum"))
    out = out.reset_index()
    out["Percent"] = 100.0 * out["GpuTimeNs"] / total
    return out.sort_values(["GpuTimeNs", "HostNs"], ascending=False, ignore_index=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_range_table_is_the_groupby_of_the_names(tmp_path, seed):
    paths = [_mixed(tmp_path / f"{k}.db", seed * 2 + k) for k in range(2)]
    with rocpd.connect(*paths) as db:
        a = analyze(db, step="")
        want = _groupby_ranges(a.processes)
        assert len(want) > 10 and want["GpuTimeNs"].sum() > 0
        pd.testing.assert_frame_equal(attribution.range_gpu_time(a.processes), want)
        pd.testing.assert_frame_equal(attribution.range_gpu_time(a.processes, top=4),
                                      want.head(4))


def test_range_table_ties_keep_the_order_of_first_appearance(tmp_path):
    with DatabaseBuilder(tmp_path / "ties.db") as b:
        for i in range(60):
            b.marker("zyxabc"[i % 6], T + i * 100, T + i * 100 + 50)
    with rocpd.connect(tmp_path / "ties.db") as db:
        got = attribution.range_gpu_time(analyze(db, step="").processes)
    assert list(got["Range"]) == list("zyxabc") and set(got["Instances"]) == {10}


@pytest.mark.parametrize("seed", range(6))
def test_factorize_is_pandas_factorize(seed):
    rnd = random.Random(seed)
    values = np.array([rnd.choice(["a", "b", "é", "x" * rnd.randint(0, 3)]) + str(rnd.randint(0, seed))
                       for _ in range(rnd.randint(0, 400))], dtype=object)
    codes, uniq = attribution.factorize(values)
    want_codes, want_uniq = pd.factorize(values, sort=False)
    assert codes.tolist() == want_codes.tolist() and list(uniq) == list(want_uniq)


def test_step_of_a_span_recorded_twice_is_named_by_the_last_record(tmp_path):
    with DatabaseBuilder(tmp_path / "dup.db") as b:
        b.marker("step 1", T, T + 100)
        b.marker("step", T, T + 100)  # same span, same thread
        b.marker("step 2", T + 200, T + 300)
        b.marker("step", T + 210, T + 250)  # nested in step 2: not a step of its own
    with rocpd.connect(tmp_path / "dup.db") as db:
        st = steps.steps_of(analyze(db, step="").processes[0], "step")
    assert st[["step", "start", "end"]].values.tolist() == [[0, T, T + 100], [1, T + 200, T + 300]]
    assert list(st["name"]) == ["step", "step 2"]


def test_per_name_table_and_steps_take_a_few_integers_per_range(distinct_names):
    """With a distinct name per range, the per-name table and the steps (every range is one)
    took 355 bytes per range at their peak (a groupby's hash table of the names, a dict keyed by
    every step's span); now under 250."""
    with rocpd.connect(distinct_names) as db:
        a = analyze(db, step="range")
        n = sum(len(p.ranges) for p in a.processes)
        assert n > 19_000  # a range of no measurable length is a mark
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            assert len(a.ranges) == n and len(a.steps) == n
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    assert peak / n < 250, f"{peak / n:.0f} bytes per range"


def test_timeline_html_stays_one_byte_per_character(distinct_names):
    """The timeline's data is ASCII JSON; its renderer had two characters beyond Latin-1, which
    made Python hold the whole section (tens of MB with many names) at two bytes a character."""
    with rocpd.connect(distinct_names) as db:
        text = report.build(db, title="names é")
    body = text.split("<script type='application/json' id='tl-data'>", 1)[1]
    body = body.split("</section>", 1)[0]
    assert len(body) > 100_000
    assert max(body) <= "\xff"


def test_written_page_is_the_built_page(distinct_names, tmp_path):
    out = tmp_path / "r.html"
    with rocpd.connect(distinct_names) as db:
        built = report.build(db, top=5)
        report.write_files(db, str(out), top=5)
    written = out.read_text(encoding="utf-8")

    def undated(page):
        return page.split("<th>generated</th>", 1)[0] + page.split("<th>generated</th>", 1)[1][30:]

    assert len(written) > 1_000_000 and undated(written) == undated(built)


def test_perfetto_trace_takes_a_few_integers_per_range(tmp_path):
    """The Perfetto trace beside the report (its default) held every range as Python tuples and
    every event in one list sorted whole: 776 bytes per range at its peak with distinct names
    (870 MB on a million); its ranges and events are now columns of integers and the names one
    UTF-8 buffer (~310 bytes per range here, most of it fixed costs of a small trace)."""
    from rocpd.export import perfetto

    n = 5000
    path = tmp_path / "names.db"
    with DatabaseBuilder(path) as b:
        for i in range(n):
            b.marker(f"range_{i:07d}", T + i * 100, T + i * 100 + 50)
    perfetto._pb()  # the perfetto package's modules are not the trace's
    with rocpd.connect(path) as db:
        perfetto.write(db, str(tmp_path / "warm.pftrace"))  # the connection's lazy set-up
        tracemalloc.start()
        try:
            out = perfetto.write(db, str(tmp_path / "t.pftrace"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (tmp_path / "t.pftrace").read_bytes() == (tmp_path / "warm.pftrace").read_bytes()
    assert os.path.getsize(out) > n * 2 * 20  # a begin and an end packet per range
    assert peak / n < 450, f"{peak / n:.0f} bytes per range"
