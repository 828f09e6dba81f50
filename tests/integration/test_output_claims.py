"""One run never writes into another's database: the name is claimed atomically (created with
O_EXCL and locked for the run), a clash gets another name and a line saying so, --no-clobber
refuses before the program starts, and the exit lines are computed from the files on disk."""

from __future__ import annotations

import re
import shlex
import sys

from support import MESSAGE, WORKLOADS, open_db, popen_rocprof, run_rocprof

N = 20_000


def _ranges(db) -> dict[str, int]:
    return dict(open_db(db).execute(f"SELECT {MESSAGE}, count(*) FROM regions GROUP BY 1"))


def test_two_runs_with_the_same_output_at_once_both_keep_every_record(tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    runs = {tag: popen_rocprof("run", "-d", tmp_path / "o", "-o", "same", WORKLOADS / "same_name.py",
                               tag, N, gate, "A", "B") for tag in ("A", "B")}
    results = {tag: (p.communicate(timeout=180), p.returncode) for tag, p in runs.items()}
    for (_, err), code in results.values():
        assert code == 0, err
    dbs = sorted((tmp_path / "o").glob("*_results.db"))
    assert len(dbs) == 2, dbs
    assert sorted(tuple(_ranges(db).items()) for db in dbs) == [(("A", N),), (("B", N),)]
    stderr = "".join(err for (_, err), _ in results.values())
    moved = re.findall(r"same_results\.db is being written by another process: this process "
                       r"\(pid \d+\) records to (\S+)", stderr)
    assert len(moved) == 1 and moved[0] in map(str, dbs), stderr
    # Each launcher names its own file, and only as written because it is complete on disk.
    written = re.findall(r"results written to (\S+)", stderr)
    assert sorted(written) == sorted(map(str, dbs)), stderr


def test_two_ranks_resolving_to_one_name_both_keep_every_record(tmp_path):
    """`mpirun -np 2 rocprof run -o rank app.py`: one launcher per rank, a name without %rank%."""
    gate = tmp_path / "gate"
    gate.mkdir()
    runs = [popen_rocprof("run", "-d", tmp_path / "o", "-o", "rank", WORKLOADS / "same_name.py",
                          f"r{rank}", N, gate, "r0", "r1", env={"RANK": str(rank), "WORLD_SIZE": "2"})
            for rank in (0, 1)]
    for p in runs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    dbs = sorted((tmp_path / "o").glob("*_results.db"))
    assert sorted(tuple(_ranges(db).items()) for db in dbs) == [(("r0", N),), (("r1", N),)]
    ranks = sorted(dict(open_db(db).execute("SELECT tag, value FROM rocpd_metadata"))["rocprof.rank"]
                   for db in dbs)
    assert ranks == ["0", "1"]


def test_processes_of_one_command_sharing_a_name_both_keep_every_record(tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    py, script, gate_arg = (shlex.quote(str(p))
                            for p in (sys.executable, WORKLOADS / "same_name.py", gate))
    both = (f"{py} {script} r0 {N} {gate_arg} r0 r1 & "
            f"{py} {script} r1 {N} {gate_arg} r0 r1; wait")
    r = run_rocprof("run", "-d", tmp_path / "o", "-o", "rank", "--", "sh", "-c", both, timeout=180)
    assert r.returncode == 0, r.stderr
    dbs = sorted((tmp_path / "o").glob("*_results.db"))
    assert len(dbs) == 2, (dbs, r.stderr)
    assert sorted(tuple(_ranges(db).items()) for db in dbs) == [(("r0", N),), (("r1", N),)]
    assert sorted(re.findall(r"results written to (\S+)", r.stderr)) == sorted(map(str, dbs))


def test_a_finished_runs_file_is_replaced_and_no_clobber_refuses_before_starting(tmp_path):
    out = tmp_path / "o"
    for _ in range(2):
        r = run_rocprof("run", "-d", out, "-o", "again", WORKLOADS / "nested_ranges.py")
        assert r.returncode == 0, r.stderr
    assert [p.name for p in out.glob("*.db")] == ["again_results.db"], "rerun replaces, as rocprofv3"
    marker = tmp_path / "ran"
    r = run_rocprof("run", "--no-clobber", "-d", out, "-o", "again", "--", sys.executable, "-c",
                    f"open({str(marker)!r}, 'w')")
    assert r.returncode == 2, r.stderr
    assert "already exists (--no-clobber" in r.stderr and str(out / "again_results.db") in r.stderr
    assert not marker.exists(), "the program must not start"
    r = run_rocprof("run", "--no-clobber", "-d", out, "-o", "again", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 2 and "--no-clobber" in r.stderr, r.stderr
