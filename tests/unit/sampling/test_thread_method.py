"""--sampling-method thread: a reader thread walks the sampled threads' frames while they run,
with no signal. The same answers as the signal method (its tests' thresholds), and what only it
has to get right: no SIGPROF handler at all, and threads whose state is freed as they end."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import rocpd
from rocpd.summary import samples
from tests.support import WORKLOADS, _env, run_rocprof


def _run(tmp_path, *args, workload, wargs=()):
    out = tmp_path / "out"
    r = run_rocprof("run", "--sampling-method", "thread", *args, "-d", out, WORKLOADS / workload,
                    *wargs)
    assert r.returncode == 0, r.stderr
    return rocpd.connect(out), r


def test_cpu_split_and_yield_without_signals(tmp_path):
    seconds = 1.0
    db, _ = _run(tmp_path, "--sample", "1000", workload="sampling_ratio.py", wargs=[seconds])
    info = samples.sampling_info(db)
    assert (info["hz"], info["mode"], info["method"]) == ("1000", "cpu", "thread"), info
    total = {r["function"]: r["total"] for r in samples.top_functions(db, by="total", limit=None)}
    a, b = total.get("hot_a", 0), total.get("hot_b", 0)
    assert a + b > 0
    assert abs(100.0 * a / (a + b) - 70.0) <= 5.0, (a, b)
    # The reader is another thread: a loaded machine may not run it at every tick, and the CPU
    # time that passes meanwhile is counted as missed samples, not made up.
    assert a + b >= 0.9 * seconds * 1000, (a + b, info)
    assert a + b + int(info["samples_missed"]) >= 0.97 * seconds * 1000, (a + b, info)
    assert "walks_torn" in info


def test_no_sigprof_handler_and_threads_that_end_while_read(tmp_path):
    seconds, threads = 0.6, 30
    db, r = _run(tmp_path, "--sample", "1000", workload="sampling_no_signals.py",
                 wargs=[seconds, threads])
    assert "sigprof caught 0" in r.stdout, r.stdout
    # Every other signal is blocked on the reader, but not the faults its walks may raise
    # (a blocked SIGSEGV kills the process: seen on 3.13 before this was so).
    assert "reader blocks segv 0" in r.stdout, r.stdout
    total = {x["function"]: x["total"] for x in samples.top_functions(db, by="total", limit=None)}
    assert total.get("spin", 0) >= 0.9 * 2 * seconds * 1000, total
    assert total.get("short_worker", 0) >= 0.9 * seconds * 1000, total
    tids = {tid for _g, _p, tid, _ts, _s in samples.sample_rows(db)}
    assert len(tids) >= threads // 2, len(tids)  # each short thread sampled as itself
    info = samples.sampling_info(db)
    assert int(info["threads_sampled"]) >= threads, info
    # The signal method catches SIGPROF: the workload can tell the difference.
    out = tmp_path / "signal"
    r = run_rocprof("run", "--sample", "1000", "-d", out, WORKLOADS / "sampling_no_signals.py",
                    0.1, 1)
    assert r.returncode == 0 and "sigprof caught 1" in r.stdout, (r.stdout, r.stderr)


def test_wall_mode_reads_a_waiting_thread_at_its_line(tmp_path):
    seconds = 0.6
    db, _ = _run(tmp_path, "--sample", "1000", "--sampling-mode", "wall",
                 workload="sampling_threads.py", wargs=[seconds])
    src = (WORKLOADS / "sampling_threads.py").read_text().splitlines()
    sleep_line = next(i + 1 for i, t in enumerate(src) if "time.sleep(seconds)" in t)
    leaves = Counter()
    stacks = samples.Stacks(db)
    for guid, _pid, tid, _ts, sid in samples.sample_rows(db):
        frames = stacks.frames(guid, sid)
        if frames:
            leaves[(tid, frames[-1].function, frames[-1].line)] += 1
    at_sleep = sum(n for (_t, f, line), n in leaves.items() if f == "sleeper" and line == sleep_line)
    in_sleeper = sum(n for (_t, f, _line), n in leaves.items() if f == "sleeper")
    assert at_sleep >= 0.5 * seconds * 1000, leaves.most_common(5)
    assert at_sleep >= 0.9 * in_sleeper, leaves.most_common(5)
    per_tid: dict[int, Counter] = {}
    for (tid, func, _line), n in leaves.items():
        per_tid.setdefault(tid, Counter())[func] += n
    owners = {f: [t for t, c in per_tid.items() if c[f] > 0] for f in ("worker_alpha", "worker_beta")}
    assert len(owners["worker_alpha"]) == 1 and len(owners["worker_beta"]) == 1, per_tid
    assert owners["worker_alpha"] != owners["worker_beta"]


def test_native_stacks_need_the_signal_method(tmp_path):
    r = run_rocprof("run", "--sample", "--sampling-method", "thread", "--native-stacks",
                    "-d", tmp_path, WORKLOADS / "sampling_ratio.py", 0.1)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "--native-stacks needs --sampling-method signal" in lines[0], r.stderr
    assert not list(tmp_path.glob("**/*.db"))


def test_in_process_threads_found_by_the_scan_and_registered_ones(tmp_path):
    # rocprof.profile(sampling_method="thread"): a thread started before the session is found
    # by the resolver's scan (its state taken from the interpreter's list), threads started
    # in it register themselves; both kinds end inside the session.
    out = tmp_path / "ip"
    r = subprocess.run([sys.executable, "-m", "sampling_inprocess", str(out), "thread"],
                       cwd=WORKLOADS, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    db = rocpd.connect(out)
    assert samples.sampling_info(db)["method"] == "thread"
    total = {x["function"]: x["total"] for x in samples.top_functions(db, by="total", limit=None)}
    assert total.get("early_worker", 0) > 100, total
    assert total.get("late_worker", 0) >= 0.9 * 300, total
    assert total.get("short_worker", 0) >= 0.9 * 400, total
    assert total.get("in_range_work", 0) >= 0.9 * 300, total
    in_range = {x["function"] for x in samples.top_functions(db, by="total", limit=None,
                                                             roctx_range="hot-range")}
    assert "in_range_work" in in_range and "outside_work" not in in_range
    # The workers' generator expressions yield 200 times a call: a read that meets one just
    # after it yielded (unlinked from its caller) is read again, never stored as a stack of
    # the generator alone.
    stacks = samples.Stacks(db)
    for guid, _pid, _tid, _ts, sid in samples.sample_rows(db):
        names = [f.function for f in stacks.frames(guid, sid)]
        if names and names[-1].endswith(".<locals>.<genexpr>"):
            assert names[-1].split(".<locals>")[0] in names, names
