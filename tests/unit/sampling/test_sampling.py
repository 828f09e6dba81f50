"""Call-stack sampling through the real launcher / in-process API, read back with rocpd.

Accuracy figures are the issue's: a 70/30 CPU split within 5 points, >= 95% of the intended
samples at 1 kHz, a GIL-releasing call attributed to its Python line, per-thread stacks.
CPU-time mode makes the ratios independent of how loaded the machine is."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter

import pytest
import rocprof

import rocpd
from rocpd.summary import samples
from tests.support import WORKLOADS, _env, run_rocprof

LAUNCHER_PACKAGE = os.path.dirname(os.path.abspath(rocprof.__file__)) + os.sep


def _run(tmp_path, *args, workload, wargs=()):
    out = tmp_path / "out"
    r = run_rocprof("run", *args, "-d", out, WORKLOADS / workload, *wargs)
    assert r.returncode == 0, r.stderr
    return rocpd.connect(out)


def _leaf_counts(db, **filters):
    stacks = samples.Stacks(db)
    c = Counter()
    for guid, _pid, tid, _ts, sid in samples.sample_rows(db, **filters):
        frames = stacks.frames(guid, sid)
        c[(tid, frames[-1].function if frames else None, frames[-1].line if frames else None)] += 1
    return c


def test_cpu_split_and_sample_yield(tmp_path):
    seconds = 2.0
    db = _run(tmp_path, "--sample", workload="sampling_ratio.py", wargs=[seconds])
    info = samples.sampling_info(db)
    assert (info["hz"], info["mode"]) == ("1000", "cpu")  # --sample alone means 1 kHz, CPU
    total = {r["function"]: r["total"] for r in samples.top_functions(db, by="total", limit=None)}
    a, b = total.get("hot_a", 0), total.get("hot_b", 0)
    assert a + b > 0
    assert abs(100.0 * a / (a + b) - 70.0) <= 5.0, (a, b)
    # The workload spends `seconds` of thread CPU time in hot_a + hot_b.
    assert a + b >= 0.95 * seconds * 1000, (a + b, info)
    # Unique stacks are stored once: far fewer stack nodes than samples.
    assert 0 < len(samples.Stacks(db)) < (a + b) / 10


def test_warm_stacks_are_stored_without_the_gil_with_their_lines(tmp_path):
    # Once a code object and an instruction's line are cached, the resolver stores the sample
    # without taking the GIL (the interpreter's threads stop while it holds it): a loop that
    # runs the same code has most of its samples stored so (those behind a first-seen line in
    # a resolver pass wait for the GIL, and under load a pass waits long for it), each still
    # naming its own line. Before, none was.
    db = _run(tmp_path, "--sample", "1000", workload="sampling_ratio.py", wargs=[0.5])
    info = samples.sampling_info(db)
    taken = int(info["samples_taken"])
    assert taken >= 400, info
    assert int(info["stored_without_gil"]) >= 0.2 * taken, info
    assert int(info["threads_sampled"]) == 1, info
    assert int(info["gil_passes"]) >= 1 and "gil_held_us" in info, info
    src = (WORKLOADS / "sampling_ratio.py").read_text().splitlines()
    spin_lines = {i + 1 for i, t in enumerate(src) if t.strip() in ("for i in range(n):", "x += i * i")}
    leaves = _leaf_counts(db)
    in_spin = {line: n for (_t, f, line), n in leaves.items() if f == "spin"}
    # The loop's two lines take nearly all of spin's samples (a few land on its call/return).
    assert sum(n for line, n in in_spin.items() if line in spin_lines) >= 0.9 * sum(in_spin.values()), in_spin
    assert all(in_spin.get(line, 0) > 0 for line in spin_lines), in_spin


def test_launcher_frames_are_cut(tmp_path):
    db = _run(tmp_path, "--sample", "1000", workload="sampling_ratio.py", wargs=[0.3])
    outer = _outermost(db, "hot_a")
    assert set(outer) == {("<module>", "sampling_ratio.py")}, outer
    stacks = samples.Stacks(db)
    files = {f.file for g, _p, _t, _ts, sid in samples.sample_rows(db) for f in stacks.frames(g, sid)
             if "hot_a" in {x.function for x in stacks.frames(g, sid)}}
    # The launcher's own files are its package folder's, wherever the checkout lives (it may
    # itself be named rocprof: the workload's path then holds /rocprof/ too).
    assert not any("runpy" in f or f.startswith(LAUNCHER_PACKAGE) for f in files), files
    assert any(f.endswith("sampling_ratio.py") for f in files), files
    # Every sample, not only the program's: the launcher's own time (before the script runs,
    # after it returns) is one frame, never rocprof's or runpy's frames.
    db = _run(tmp_path / "fast", "--sample", "20000", workload="sampling_ratio.py", wargs=[0.05])
    stacks = samples.Stacks(db)
    every = [stacks.frames(g, sid) for g, _p, _t, _ts, sid in samples.sample_rows(db)]
    mine = [fs for fs in every if fs[0].function == "<rocprof launcher>"]
    assert all(len(fs) == 1 for fs in mine), mine[:3]
    theirs = [fs for fs in every
              if any("runpy" in f.file or f.file.startswith(LAUNCHER_PACKAGE) for f in fs)]
    assert not theirs, [[(f.function, f.file) for f in fs] for fs in theirs[:3]]
    # -m module: the module's <module> is the outermost frame.
    out = tmp_path / "m"
    r = run_rocprof("run", "--sample", "1000", "-d", out, "-m", "sampling_ratio", "0.3",
                    cwd=WORKLOADS)
    assert r.returncode == 0, r.stderr
    outer = _outermost(rocpd.connect(out), "hot_b")
    assert set(outer) == {("<module>", "sampling_ratio.py")}, outer


def test_a_script_in_folders_named_like_the_launcher_keeps_its_frames(tmp_path):
    """The cut matches the launcher's own code files, not folder names: a script living in
    .../rocprof/python/rocprof/cli/ (as a checkout named rocprof would have it) keeps all its frames."""
    home = tmp_path / "my work" / "rocprof" / "python" / "rocprof" / "cli"
    home.mkdir(parents=True)
    script = home / "sampling_ratio.py"
    script.write_text((WORKLOADS / "sampling_ratio.py").read_text())
    out = tmp_path / "out"
    r = run_rocprof("run", "--sample", "1000", "-d", out, script, "0.3", cwd=home)
    assert r.returncode == 0, r.stderr
    db = rocpd.connect(out)
    assert set(_outermost(db, "hot_a")) == {("<module>", "sampling_ratio.py")}
    stacks = samples.Stacks(db)
    files = {f.file for g, _p, _t, _ts, sid in samples.sample_rows(db) for f in stacks.frames(g, sid)}
    assert str(script) in files, files


def test_wall_mode_attributes_gil_releasing_call_to_its_line(tmp_path):
    seconds = 0.6
    db = _run(tmp_path, "--sample", "1000", "--sampling-mode", "wall",
              workload="sampling_threads.py", wargs=[seconds])
    src = (WORKLOADS / "sampling_threads.py").read_text().splitlines()
    sleep_line = next(i + 1 for i, t in enumerate(src) if "time.sleep(seconds)" in t)
    leaves = _leaf_counts(db)
    at_sleep = sum(n for (_t, f, line), n in leaves.items() if f == "sleeper" and line == sleep_line)
    in_sleeper = sum(n for (_t, f, _line), n in leaves.items() if f == "sleeper")
    # Wall-clock samples of a sleeping thread land on its sleep line (~600 on a quiet machine;
    # a loaded one delivers fewer timer signals, so the count's floor is low and the share high).
    assert at_sleep >= 0.2 * seconds * 1000, leaves.most_common(5)
    assert at_sleep >= 0.9 * in_sleeper, leaves.most_common(5)


def test_threads_get_their_own_stacks(tmp_path):
    db = _run(tmp_path, "--sample", "1000", workload="sampling_threads.py", wargs=[0.4])
    per_tid: dict[int, Counter] = {}
    for (tid, func, _line), n in _leaf_counts(db).items():
        per_tid.setdefault(tid, Counter())[func] += n
    owners = {f: [t for t, c in per_tid.items() if c[f] > 0] for f in ("worker_alpha", "worker_beta")}
    assert len(owners["worker_alpha"]) == 1 and len(owners["worker_beta"]) == 1, per_tid
    assert owners["worker_alpha"] != owners["worker_beta"]
    # Both threads start during the session: sampled from their start (0.4 s of CPU each).
    for f in ("worker_alpha", "worker_beta"):
        assert sum(c[f] for c in per_tid.values()) >= 0.95 * 400, per_tid
    tracks = db.execute("SELECT COUNT(DISTINCT tid) FROM samples WHERE category='PYTHON_SAMPLE'")
    assert tracks.fetchone()[0] >= 2


def _outermost(db, func):
    """Counter of the outermost frame (function, file name) of samples with `func` on them."""
    stacks = samples.Stacks(db)
    c = Counter()
    for guid, _pid, _tid, _ts, sid in samples.sample_rows(db):
        frames = stacks.frames(guid, sid)
        if any(f.function == func for f in frames):
            c[(frames[0].function, frames[0].file.rsplit("/", 1)[-1])] += 1
    return c


def test_in_process_threads_before_and_after_and_roctx_range(tmp_path):
    out = tmp_path / "ip"
    # Run as `python -m`: runpy's frames are the program's own here, not a launcher's.
    r = subprocess.run([sys.executable, "-m", "sampling_inprocess", str(out)], cwd=WORKLOADS,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    db = rocpd.connect(out)
    outer = _outermost(db, "in_range_work")
    assert set(outer) == {("_run_module_as_main", "runpy.py")} or \
        set(outer) == {("_run_module_as_main", "<frozen runpy>")}, outer
    total = {x["function"]: x["total"] for x in samples.top_functions(db, by="total", limit=None)}
    assert total.get("early_worker", 0) > 100   # thread started before the session
    # Threads started during the session are sampled from their start, not from the
    # resolver's next scan (50 ms): >= 95% of their CPU time at 1 kHz (0.3 s; 4 x 0.1 s).
    assert total.get("late_worker", 0) >= 0.95 * 300, total
    assert total.get("short_worker", 0) >= 0.95 * 400, total
    shorts = db.execute("SELECT COUNT(DISTINCT tid) FROM samples WHERE category='PYTHON_SAMPLE'")
    assert shorts.fetchone()[0] >= 7  # main, early, late, 4 short threads
    in_range = {x["function"] for x in samples.top_functions(db, by="total", limit=None,
                                                             roctx_range="hot-range")}
    assert "in_range_work" in in_range and "outside_work" not in in_range


def test_exports(tmp_path):
    db = _run(tmp_path, "--sample", "500", workload="sampling_ratio.py", wargs=[0.5])
    from rocpd.export import collapsed, flamegraph

    folded = collapsed.write(db, tmp_path / "s.folded")
    lines = open(folded).read().splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any("hot_a" in line for line in lines)
    svg = open(flamegraph.write(db, tmp_path / "s.svg")).read()
    assert svg.startswith("<svg") and "hot_b" in svg


def test_no_sampling_without_the_option(tmp_path):
    db = _run(tmp_path, workload="sampling_ratio.py", wargs=[0.2])
    assert samples.sample_rows(db) == []


@pytest.mark.skipif(not __import__("rocprof._core", fromlist=["x"]).sampling_native_available(),
                    reason="built without libunwind")
def test_native_stacks_merge_python_frames(tmp_path):
    db = _run(tmp_path, "--sample", "1000", "--native-stacks", workload="sampling_ratio.py",
              wargs=[0.5])
    assert samples.sampling_info(db)["native"] == "1"
    stacks = samples.Stacks(db)
    kinds = Counter()
    for guid, _pid, _tid, _ts, sid in samples.sample_rows(db):
        frames = stacks.frames(guid, sid)
        names = [f.function for f in frames]
        if "hot_a" in names:
            kinds["python"] += 1
            kinds["native"] += any(f.kind == "native" for f in frames)
            # The interpreter's own eval loop is replaced by the Python frames it ran.
            assert not any("_PyEval_EvalFrameDefault" in n for n in names)
    assert kinds["python"] > 100 and kinds["native"] > 0.5 * kinds["python"], kinds


def _work_counts(db, names):
    """Counter {(pid, tid, name)}: samples by the first of `names` on their stack."""
    stacks = samples.Stacks(db)
    c = Counter()
    for guid, pid, tid, _ts, sid in samples.sample_rows(db):
        on = {f.function for f in stacks.frames(guid, sid)}
        c[(pid, tid, next((n for n in names if n in on), None))] += 1
    return c


def test_fork_child_samples_into_its_own_database(tmp_path):
    seconds, storm = 0.3, 20
    out = tmp_path / "out"
    r = run_rocprof("run", "--sample", "1000", "-d", out, "-o", "fk",
                    WORKLOADS / "sampling_fork.py", seconds, storm)
    assert "storm bad 0" in r.stdout, (r.stdout, r.stderr[-3000:])  # no child crashed or hung
    assert r.returncode == 0, r.stderr[-3000:]
    child = int(next(x.split()[1] for x in r.stdout.splitlines() if x.startswith("child ")))
    names = ("child_work", "parent_before", "parent_after", "background", "storm_child")
    with sqlite3.connect(out / f"fk_{child}_results.db") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cdb = rocpd.connect(out / f"fk_{child}_results.db")
    got = _work_counts(cdb, names)
    # The child's own samples, on its own (main) thread, from its first moments: it is
    # sampled from Python's after-fork hook on, not from the next thread scan.
    assert got[(child, child, "child_work")] >= 0.95 * seconds * 1000, got
    assert {k[2] for k in got} <= {"child_work", None}, got   # nothing of the parent's
    assert {(k[0], k[1]) for k in got} == {(child, child)}, got
    pdb = rocpd.connect(out / "fk_results.db")
    got = _work_counts(pdb, names)
    parent = pdb.execute("SELECT pid FROM rocpd_info_process").fetchone()[0]
    for phase in ("parent_before", "parent_after"):   # sampling goes on after the fork
        assert got[(parent, parent, phase)] >= 0.95 * seconds * 1000, got
    assert not any(k[2] in ("child_work", "storm_child") for k in got), got
    assert {k[0] for k in got} == {parent}, got
    assert samples.sampling_info(pdb)["samples_taken"] == str(sum(got.values())), got
    storm_dbs = [p for p in out.glob("fk_*_results.db") if p.name != f"fk_{child}_results.db"]
    assert len(storm_dbs) == storm


def _signals(tmp_path, mode):
    r = subprocess.run([sys.executable, str(WORKLOADS / "sampling_signals.py"), mode,
                        str(tmp_path / mode)], env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    return json.loads(r.stdout.splitlines()[-1]), r.stderr


def test_sigprof_is_given_back_when_the_session_stops(tmp_path):
    got, err = _signals(tmp_path, "restore")
    assert got["before"] is False
    assert all(got["during"]) and not any(got["after"]), got
    assert "SIGPROF" not in err, err
    # The last session still samples (raw rows: a later session's database lacks strings
    # interned by earlier ones, a session-core issue, so its category names may be missing).
    with sqlite3.connect(next((tmp_path / "restore" / "r14").glob("*_results.db"))) as raw:
        assert raw.execute("SELECT COUNT(*) FROM rocpd_sample").fetchone()[0] > 100


def test_sigprof_handler_installed_before_ours_is_chained(tmp_path):
    got, err = _signals(tmp_path, "chain")
    # its ITIMER_PROF ticks (0.3 s of CPU at 200 Hz) still reach it during the session
    assert got["during"] >= 20 and got["after"] >= 5 and got["caught_after"], got
    assert len([line for line in err.splitlines() if "SIGPROF" in line]) == 1, err
    total = {x["function"]: x["total"] for x in
             samples.top_functions(rocpd.connect(tmp_path / "chain"), by="total", limit=None)}
    assert total.get("busy", 0) >= 0.95 * 300, total
