"""Quiet when there is nothing to say: on a CPU-only run `rocpd analyze` and the report leave
out the GPU tables with one line naming what was not recorded and the flag that records it;
`rocprof run -S` shows the samples when sampling was on; `rocpd sol` after a --sol run that
could not count says what happened."""

import re
import sys

from support import WORKLOADS, run_rocprof

import rocpd
from rocpd.testing import DatabaseBuilder

sys.path.insert(0, str(WORKLOADS.parents[1] / "tests" / "unit" / "rocpd"))


def rocpd_cli(*args, capsys):
    from rocpd.cli import main

    rc = main([*map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_analyze_of_a_cpu_only_run_has_no_empty_sections(tmp_path, capsys):
    p = run_rocprof("run", "-d", tmp_path, "-o", "cpu", WORKLOADS / "sampling_ratio.py", "0.3")
    assert p.returncode == 0, p.stderr
    rc, out, _ = rocpd_cli("analyze", tmp_path / "cpu_results.db", capsys=capsys)
    assert rc == 0
    assert "(no rows)" not in out
    assert "== TEMPORAL" not in out and "== GPU TIME BY ROCTX RANGE" not in out
    omitted = [ln for ln in out.splitlines() if ln.startswith("not shown:")]
    assert len(omitted) == 4, out  # no GPU work; no step range; no ROCTx range; no samples
    gpu = next(ln for ln in omitted if "no GPU work recorded" in ln)
    assert "temporal, idle, parts, per-step, launch" in gpu and "--kernel-trace" in gpu
    steps = next(ln for ln in omitted if ln.startswith("not shown: steps:"))
    assert 'roctx.range("step")' in steps
    assert "not shown: phases, ranges: no ROCTx ranges recorded" in out and "--marker-trace" in out
    assert "not shown: hot-lines: no call-stack samples recorded: rocprof run --sample" in out


def test_omitted_sections_name_their_flag_on_a_gpu_trace(tmp_path, capsys):
    """Kernels recorded, no API calls, one process: the waits and the stragglers are left out
    with their reasons, the GPU tables are shown."""
    import analysis_patterns as P

    path = P.launch_bound(tmp_path / "lb.db")
    with DatabaseBuilder(tmp_path / "kernels.db") as b:
        for s in range(3):
            b.marker("step", P.ns(s * 100), P.ns(s * 100 + 90))
            b.kernel("k", P.ns(s * 100 + 10), P.ns(s * 100 + 50), site=("/w/t.py", 3, "f"))
    rc, out, _ = rocpd_cli("analyze", tmp_path / "kernels.db", capsys=capsys)
    assert rc == 0 and "(no rows)" not in out and "== TEMPORAL BREAKDOWN" in out
    assert "not shown: overlap: no collective kernels (NCCL, RCCL) recorded" in out
    assert re.search(r"not shown: stragglers: one process", out)
    assert "not shown: waits: no API calls recorded" in out and "--sys-trace" in out
    rc, out, _ = rocpd_cli("analyze", path, capsys=capsys)  # API calls, no waits among them
    assert "not shown: waits: no synchronisations or copies to the host" in out


def test_report_of_a_cpu_only_run_has_no_zero_gpu_tables(tmp_path, capsys):
    with DatabaseBuilder(tmp_path / "cpu.db") as b:
        for s in range(3):
            b.marker("step", 1000 + s * 100, 1000 + s * 100 + 90)
    out = tmp_path / "r.html"
    rc, _, _ = rocpd_cli("report", tmp_path / "cpu.db", "-o", out, capsys=capsys)
    assert rc == 0
    page = out.read_text()
    assert "(no rows)" not in page
    assert "GPU time by ROCTx range</h3>" not in page and "Temporal breakdown</h3>" not in page
    assert page.count("not shown: ") == 1 and "no GPU work recorded" in page


def test_summary_shows_the_samples_when_sampling_was_on(tmp_path):
    p = run_rocprof("run", "-d", tmp_path, "-o", "s", "--sample", "1000", "-S",
                    WORKLOADS / "sampling_ratio.py", "0.5")
    assert p.returncode == 0, p.stderr
    head = re.search(r"== SAMPLES \((\d+) call-stack samples, 1000 Hz, cpu time\) ==", p.stdout)
    assert head and int(head.group(1)) > 10, p.stdout
    table = p.stdout[head.start():]
    assert re.search(r"\n\s+\d+\s+[\d.]+%\s+spin\s+\S.*sampling_ratio\.py:\d+", table), table
    assert re.search(r"\n\s+\d+\s+[\d.]+%\s+hot_a\s+\S.*sampling_ratio\.py\n", table), table
    # without sampling: no such table
    q = run_rocprof("run", "-d", tmp_path, "-o", "n", "-S", WORKLOADS / "sampling_ratio.py", "0.1")
    assert q.returncode == 0 and "== SAMPLES" not in q.stdout


def test_sol_after_a_sol_run_that_counted_nothing_says_why(tmp_path, capsys):
    p = run_rocprof("run", "-d", tmp_path, "-o", "sol", "--sol", WORKLOADS / "sampling_ratio.py", "0.1")
    assert p.returncode == 0, p.stderr
    db = tmp_path / "sol_results.db"
    rc, _, err = rocpd_cli("sol", db, capsys=capsys)
    assert rc != 0
    assert "although the run asked for them (--sol)" in err, err
    assert "no GPU backend is live here" in err and "profile with" not in err
    # a run whose counters failed on the GPU: the status it stored
    with DatabaseBuilder(tmp_path / "off.db") as b:
        b.metadata("rocprof.options", '{"sol": true, "pmc": []}')
        b.metadata("rocprof.counters.status", "off for GPU 0: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")
        b.kernel("k", 10, 20)
    rc, _, err = rocpd_cli("sol", tmp_path / "off.db", capsys=capsys)
    assert rc != 0 and "the counters were off for GPU 0: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in err
    # a run that never asked
    with DatabaseBuilder(tmp_path / "plain.db") as b:
        b.kernel("k", 10, 20)
    rc, _, err = rocpd_cli("sol", tmp_path / "plain.db", capsys=capsys)
    assert rc != 0 and "the run did not ask for them; profile with `rocprof run --sol" in err
    with rocpd.connect(str(db)) as c:
        assert any(t == "rocprof.notes" for _, t, _ in c.metadata())
