"""Host and process metrics (rocprof run --process-freq) read from this machine's real /proc:
a workload touches a known number of fresh pages, spins one thread, then sleeps, each inside a
ROCTx range, and the recorded page faults, resident memory, CPU use, per-core load and sample
rate must say so."""

from __future__ import annotations

import json
import os
import statistics

import pytest
from support import MESSAGE, WORKLOADS, open_db, run_rocprof

HZ = 50
MIB = 64


@pytest.fixture(scope="module")
def host_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("host")
    r = run_rocprof("run", "-d", out, "-o", "h", "--process-freq", HZ, "--gpus", "none",
                    WORKLOADS / "metrics_host.py", MIB, 1.0, 1.0)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    db = str(out / "h_results.db")
    with open_db(db) as c:
        ranges = {n: (s, e) for n, s, e in c.execute(
            f"SELECT {MESSAGE}, start, \"end\" FROM regions WHERE category LIKE 'MARKER%'")}
        values: dict[str, list] = {}
        for name, ts, v in c.execute(
                "SELECT N.string, SA.timestamp, PE.value FROM rocpd_sample SA JOIN rocpd_track T"
                " ON T.id = SA.track_id JOIN rocpd_string N ON N.id = T.name_id JOIN rocpd_pmc_event"
                " PE ON PE.event_id = SA.event_id ORDER BY SA.timestamp"):
            values.setdefault(name, []).append((ts, v))
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.metrics.%'"))
        pmc = {n: (a, arch, u, i) for n, a, arch, u, i in c.execute(
            "SELECT name, agent_id, target_arch, units, instance_id FROM rocpd_info_pmc")}
        cats = {r[0] for r in c.execute("SELECT DISTINCT category FROM metric_samples")}
    return dict(db=db, facts=facts, ranges=ranges, values=values, meta=meta, pmc=pmc, cats=cats,
                stderr=r.stderr)


def inside(series, lo, hi):
    return [(t, v) for t, v in series if lo < t <= hi]


def test_page_faults_add_up_to_the_pages_touched(host_run):
    """The fault rates integrated over the readings around the "touch" range give back the
    faults the workload measured for itself (one per 4 KiB page: THP is off for its buffer)."""
    pages = host_run["facts"]["pages"]
    assert host_run["facts"]["minflt_delta"] == pytest.approx(pages, rel=0.02)
    lo, hi = host_run["ranges"]["touch"]
    faults = host_run["values"]["process_page_faults"]
    times = [t for t, _ in faults]
    first = next(i for i, t in enumerate(times) if t > lo)
    last = next(i for i, t in enumerate(times) if t >= hi)
    prev = host_run["values"]["process_rss"][0][0] if first == 0 else times[first - 1]
    counted = 0.0
    for t, rate in faults[first:last + 1]:
        counted += rate * (t - prev) / 1e9
        prev = t
    assert pages <= counted + 1 <= pages + 2000  # + the interpreter's own faults meanwhile


def test_rss_grows_by_the_buffer(host_run):
    lo, hi = host_run["ranges"]["touch"]
    rss = host_run["values"]["process_rss"]
    before = [v for t, v in rss if t <= lo][-1]
    after = [v for t, v in rss if t <= hi][-1]
    assert after - before == pytest.approx(MIB * 2**20 / 1e6, rel=0.1)


def cpu_seconds(series, lo, hi):
    """CPU seconds the process_cpu_usage readings account for between lo and hi: each reading
    is the CPU use since the one before it, so the readings from the first after lo to the
    first at or after hi (or the last reading, when the run ended first) cover [reading before
    lo, that last reading]."""
    times = [t for t, _ in series]
    first = next(i for i, t in enumerate(times) if t > lo)
    last = next((i for i, t in enumerate(times) if t >= hi), len(times) - 1)
    return sum(v / 100 * (times[i] - times[i - 1]) / 1e9 for i, (_, v) in
               enumerate(series[first:last + 1], start=first) if i > 0)


def test_cpu_use_adds_up_to_the_cpu_time_the_spinner_got(host_run):
    """The CPU-use readings integrated over the "spin" range give back the CPU time the
    workload measured for itself (whatever share of a core a loaded machine gave it), within
    /proc's clock-tick resolution and the sampler's own use; ~none while it sleeps."""
    cpu = host_run["values"]["process_cpu_usage"]
    got = host_run["facts"]["spin_cpu_s"]
    assert got > 0.05  # the spinner ran at all (a loaded machine may give it little)
    lo, hi = host_run["ranges"]["spin"]
    assert cpu_seconds(cpu, lo, hi) == pytest.approx(got, abs=0.06 + 0.1 * got)
    period = 1e9 / HZ
    lo, hi = host_run["ranges"]["sleep"]
    assert cpu_seconds(cpu, lo + period, hi) <= 0.05
    assert all(0 <= v <= 100 * os.cpu_count() + 10 for _, v in cpu)
    # Per-core loads are percentages, one series per core of /proc/stat; the spinner's core
    # was busy at least as much as the process used it.
    loads = {n: s for n, s in host_run["values"].items() if n.startswith("cpu_load [")}
    assert len(loads) == len(open("/proc/stat").read().split("\ncpu")) - 1
    assert all(0 <= v <= 100 for s in loads.values() for _, v in s)
    lo, hi = host_run["ranges"]["spin"]
    busy = sum(statistics.mean(v for _, v in inside(s, lo + period, hi)) for s in loads.values())
    assert busy / 100 >= 0.8 * got / ((hi - lo) / 1e9)


def test_sample_rate_and_what_is_described(host_run):
    rss = host_run["values"]["process_rss"]
    gaps = [b[0] - a[0] for a, b in zip(rss, rss[1:], strict=False)]
    assert statistics.median(gaps) == pytest.approx(1e9 / HZ, rel=0.15)
    assert int(host_run["meta"]["rocprof.metrics.readings"]) == len(rss)
    assert host_run["meta"]["rocprof.metrics.gpu_source"] == "none (--gpus none)"
    assert "no GPU metrics" not in host_run["stderr"]  # --gpus none asked for none
    pmc = host_run["pmc"]
    assert pmc["process_rss"] == (1, "CPU", "MB", 0)
    assert pmc["process_page_faults"] == (1, "CPU", "1/s", 0)
    assert pmc["process_cpu_usage"] == (1, "CPU", "%", 0)
    cores = sorted(int(n[len("cpu_load ["):-1]) for n in pmc if n.startswith("cpu_load ["))
    assert cores == sorted(int(ln.split()[0][3:]) for ln in open("/proc/stat")
                           if ln.startswith("cpu") and ln[3].isdigit())
    assert pmc[f"cpu_load [{cores[-1]}]"] == (1, "CPU", "%", cores[-1])
    assert host_run["cats"] >= {"cpu_frequency"}


def test_core_frequencies_where_the_machine_reports_them(host_run):
    source = host_run["meta"]["rocprof.metrics.cpu_frequency_source"]
    sysfs = os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    cpuinfo = "cpu MHz" in open("/proc/cpuinfo").read()
    if not (sysfs or cpuinfo):
        assert source == "none found"
        pytest.skip("this machine reports no core frequency (no cpufreq, no 'cpu MHz')")
    assert source == ("cpufreq scaling_cur_freq" if sysfs else "/proc/cpuinfo")
    freqs = {n: s for n, s in host_run["values"].items() if n.startswith("cpu_frequency [")}
    assert freqs and all(100 < v < 10000 for s in freqs.values() for _, v in s)


def test_cpus_limits_the_per_core_series(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "c", "--process-freq", 20, "--gpus", "none",
                    "--cpus", "0", WORKLOADS / "sleep_for.py", 0.3)
    assert r.returncode == 0, r.stderr
    with open_db(tmp_path / "c_results.db") as c:
        names = {n for (n,) in c.execute("SELECT name FROM rocpd_info_pmc")}
    assert {n for n in names if n.startswith("cpu_")} <= {"cpu_load [0]", "cpu_frequency [0]"}
    assert "cpu_load [0]" in names and "process_rss" in names


def test_fork_children_leave_the_sampling_to_their_parent(tmp_path):
    """A fork child (a data loader worker, or a fork about to exec) starts no sampler: its
    parent samples the devices, and a child that records nothing leaves no database."""
    r = run_rocprof("run", "-d", tmp_path, "-o", "f", "--process-freq", 50, "--gpus", "none",
                    WORKLOADS / "forking.py", 5)
    assert r.returncode == 0, r.stderr
    child = int(r.stdout.split("child", 1)[1].split()[0])
    parent_db, child_db = tmp_path / "f_results.db", tmp_path / f"f_{child}_results.db"
    with open_db(parent_db) as c:
        assert c.execute("SELECT COUNT(*) FROM rocpd_pmc_event").fetchone()[0] > 0
    with open_db(child_db) as c:
        assert c.execute(f"SELECT COUNT(*) FROM regions WHERE {MESSAGE} = 'child'").fetchone()[0] == 5
        assert c.execute("SELECT COUNT(*) FROM rocpd_info_pmc").fetchone()[0] == 0
        assert c.execute("SELECT COUNT(*) FROM rocpd_sample").fetchone()[0] == 0
