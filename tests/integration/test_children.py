"""Python children that are not forks (subprocess, multiprocessing spawn) get databases."""

from __future__ import annotations

import json

from support import MESSAGE, WORKLOADS, open_db, run_rocprof


def names(db):
    return [n for (n,) in open_db(db).execute(f"SELECT {MESSAGE} FROM regions")]


def test_subprocess_and_spawn_children_are_profiled(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", WORKLOADS / "spawns_child.py", timeout=180)
    assert r.returncode == 0, r.stderr
    assert names(tmp_path / "p_results.db") == ["parent-work"]
    children = {db.name: names(db) for db in tmp_path.glob("p_*_results.db")}
    found = sorted(n for ns in children.values() for n in ns)
    assert "subprocess-work" in found and "spawned-work" in found, children
    assert found.count("subprocess-work") == 1 and found.count("spawned-work") == 1
    # multiprocessing's resource tracker (started for the spawn Queue's lock) runs none of the
    # program's code and outlives it: no database of its own, no "still being written" line.
    assert len(children) == 2, children
    assert "still being written" not in r.stderr, r.stderr


def test_no_follow_children(tmp_path):
    r = run_rocprof("run", "--no-follow-children", "-d", tmp_path, "-o", "p",
                    WORKLOADS / "spawns_child.py", timeout=180)
    assert r.returncode == 0, r.stderr
    assert [db.name for db in tmp_path.glob("*.db")] == ["p_results.db"]


def test_torchrun_ranks_each_get_a_database(tmp_path):
    import pytest

    pytest.importorskip("torch.distributed.run")
    r = run_rocprof("run", "-d", tmp_path, "-o", "r%rank%", "-m", "torch.distributed.run",
                    "--standalone", "--nproc-per-node", "2", WORKLOADS / "ddp_ranks.py", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    by_rank = {}
    for db in tmp_path.glob("r*_results.db"):
        for (name,) in open_db(db).execute(f"SELECT {MESSAGE} FROM regions"):
            by_rank.setdefault(name, []).append(db.name)
    assert sorted(by_rank) == ["rank-0-allreduce", "rank-1-allreduce"], by_rank
    assert by_rank["rank-0-allreduce"][0].startswith("r0_")
    assert by_rank["rank-1-allreduce"][0].startswith("r1_")


def test_child_in_another_directory_writes_beside_the_parent(tmp_path):
    r = run_rocprof("run", "-d", "rel-out", "-o", "p", WORKLOADS / "child_elsewhere.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    children = list((tmp_path / "rel-out").glob("p_*_results.db"))
    assert [names(db) for db in children] == [["elsewhere"]]


def _child_db(folder):
    (db,) = folder.glob("p_*_results.db")
    return dict(open_db(db).execute("SELECT tag, value FROM rocpd_metadata"))


def test_child_of_a_threaded_parent_is_sampled_from_its_start(tmp_path):
    # The child's work is one long call that holds the GIL, right at its start: its main thread
    # must be sampled from the session's start, not from the resolver's first scan (which needs
    # the GIL, and came after the work was done: samples_taken 0).
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "--sample", "1000",
                    WORKLOADS / "threaded_parent.py", "sum(range(3 * 10**7))", timeout=180)
    assert r.returncode == 0, r.stderr
    meta = _child_db(tmp_path)
    assert int(meta["rocprof.sampling.samples_taken"]) > 0, meta
    assert "took no call-stack samples" not in r.stderr


def test_child_that_took_no_samples_says_why(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "--sample", "2",
                    WORKLOADS / "threaded_parent.py", "import time; time.sleep(0.3)", timeout=180)
    assert r.returncode == 0, r.stderr
    meta = _child_db(tmp_path)
    assert meta["rocprof.sampling.samples_taken"] == "0"
    why = meta["rocprof.sampling.no_samples"]
    assert "ms of CPU" in why and "wall" in why, why
    assert f"took no call-stack samples at 2 Hz: {why}" in r.stderr


def test_a_child_records_as_the_run_was_configured(tmp_path):
    """The launcher configures once; each child starts from that: -P's window and
    --selected-regions, --no-redact, --rccl-trace's metadata, the notes, its own rank."""
    parent = tmp_path / "parent.py"
    parent.write_text("import subprocess, sys\n"
                      f"subprocess.run([sys.executable, {str(WORKLOADS / 'periodic_ranges.py')!r}],"
                      " check=True)\n")
    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "-P", "250:250:1",
                    "--collection-period-unit", "msec", "--no-redact", "--rccl-trace", "--sample",
                    parent, env={"RANK": "3"}, timeout=180)
    assert r.returncode == 0, r.stderr
    ticks = int(r.stdout.split("ticks")[1])
    (child,) = [db for db in tmp_path.glob("p_*_results.db")]
    kept = sorted(int(n.split("-")[1]) for n in names(child))
    assert kept and 0 not in kept and ticks - 1 not in kept, (kept, ticks)
    assert kept == list(range(kept[0], kept[-1] + 1))
    meta = dict(open_db(child).execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["rocprof.rank"] == "3" and meta["rocprof.nccl.plugin"].startswith("not loaded")
    assert "rocprof.sampling.samples_taken" in meta  # --sample reached the child
    options = json.loads(open_db(child).execute(
        "SELECT extdata FROM rocpd_info_process").fetchone()[0])
    assert options["redact_text"] is False and options["selected_regions"] is True
    assert options["output_file"] == "p_%pid%" and not options["stats"]
