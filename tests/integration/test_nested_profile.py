"""Issue 12: rocprof.profile() inside a script run by `rocprof run` joins the running session
as a ROCTx range named after it (it raised "a profiling session is already running")."""

from __future__ import annotations

from support import MESSAGE, WORKLOADS, open_db, run_rocprof


def test_nested_profile_is_a_range_of_the_running_session(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "n", WORKLOADS / "nested_profile.py")
    assert r.returncode == 0, r.stderr
    db = tmp_path / "n_results.db"
    assert f"path {db} True" in r.stdout
    assert sorted(p.name for p in tmp_path.glob("*.db")) == ["n_results.db"]
    rows = {name: (start, end) for name, start, end in
            open_db(db).execute(f"SELECT {MESSAGE}, start, end FROM regions_and_samples")}
    assert set(rows) == {"phase1", "inside-phase1", "rocprof.profile", "inside-anonymous", "after"}
    assert rows["phase1"][0] <= rows["inside-phase1"][0] <= rows["inside-phase1"][1] <= rows["phase1"][1]
    assert rows["rocprof.profile"][0] <= rows["inside-anonymous"][0] <= rows["rocprof.profile"][1]
