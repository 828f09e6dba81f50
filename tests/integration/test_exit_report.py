"""The launcher's last lines, one per database of the run: a database its writer closed complete
is taken at the writer's word (reading a status back makes SQLite parse the whole schema, a few
milliseconds per database at every run's end), unless the file changed after its writer let it
go: then what is on disk is said."""

from __future__ import annotations

import signal

from support import WORKLOADS, popen_rocprof, run_rocprof

# The program: two followed children record; then one child's database is held under an
# exclusive SQLite lock (by a process of its own, not followed, until the launcher has ended),
# so that reading it back could only fail, and the other is changed to say its output failed.
PROGRAM = """import glob, os, sqlite3, subprocess, sys
out = sys.argv[1]
for _ in range(2):
    subprocess.run([sys.executable, "-c", "print('child')"], check=True)
held, changed = sorted(glob.glob(os.path.join(out, "p_*_results.db")))
HOLD = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()")
quiet = {k: v for k, v in os.environ.items() if not k.startswith("ROCPROF_")}
sys.holder = subprocess.Popen([sys.executable, "-c", HOLD, held], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=quiet)
assert sys.holder.stdout.readline() == "held\\n"
c = sqlite3.connect(changed)
(table,) = c.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                     "AND name GLOB 'rocpd_metadata*'").fetchone()
c.execute(f"UPDATE {table} SET value = 'disk-full' WHERE tag = 'rocprof.status'")
c.commit()
c.close()
print("HELD", held)
print("CHANGED", changed)
"""


def test_a_closed_database_is_said_complete_unless_it_changed_since(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PROGRAM)
    out = tmp_path / "out"
    r = run_rocprof("run", "-d", out, "-o", "p", script, out)
    assert r.returncode == 0, r.stderr
    said = dict(line.split(" ", 1) for line in r.stdout.splitlines() if line[:4] in ("HELD", "CHAN"))
    held, changed = said["HELD"], said["CHANGED"]
    lines = [line for line in r.stderr.splitlines() if line.startswith("rocprof: ")]
    assert f"rocprof: results written to {held}" in lines, r.stderr
    assert any(line.startswith(f"rocprof: {changed} is incomplete (disk-full)") for line in lines), \
        r.stderr
    assert f"rocprof: results written to {out / 'p_results.db'}" in lines, r.stderr


def test_a_process_that_outlives_the_launcher_leaves_no_manifest_behind(tmp_path):
    # A followed child still recording when the launcher has reported (multiprocessing's
    # resource tracker is one) closes its database after the manifest is gone: it must not
    # make a new one that nothing would read or remove.
    folder = tmp_path / "tmp"
    folder.mkdir()
    program = tmp_path / "outlived.py"
    program.write_text(
        "import subprocess, sys\n"
        "late = 'import time, roctx\\ntime.sleep(2)\\nwith roctx.range(\"late\"):\\n    pass\\n'\n"
        "subprocess.Popen([sys.executable, '-c', late])\n")
    # The child keeps the launcher's output pipes open: this returns when it has ended too.
    r = run_rocprof("run", "-d", tmp_path / "out", "-o", "p", program, env={"TMPDIR": str(folder)},
                    timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "out").glob("p_*_results.db"))) == 1, r.stderr
    assert list(folder.iterdir()) == []


def test_a_launcher_killed_by_sigterm_reports_and_leaves_no_manifest_behind(tmp_path):
    # The script runs in the launcher: its native handler closes the session, prints the last
    # lines and removes the manifest, then the process dies of the signal as it would have.
    folder = tmp_path / "tmp"
    folder.mkdir()
    p = popen_rocprof("run", "-d", tmp_path / "out", "-o", "k", WORKLOADS / "signal_self.py",
                      "plain", env={"TMPDIR": str(folder)})
    try:
        assert p.stdout.readline().startswith("ready"), p.stderr.read()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGTERM, err
    assert f"rocprof: results written to {tmp_path / 'out' / 'k_results.db'}" in err.splitlines(), err
    assert list(folder.iterdir()) == []
