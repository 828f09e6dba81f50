"""`rocprof run --on-demand` + `rocprof ctl`: a running program records nothing until a window is
started; each window is a database of its own holding only that window's records.

Tolerance of a window (stated in the README): it holds the ranges that began after its start
and the ranges still open at its end, closed there and flagged; every record lies between the
window's start and end as its database stores them (rocpd_info_process init .. end), and the
window lasts its --duration plus the time to finish the database."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest
from support import MESSAGE, WORKLOADS, build_roctx_program, open_db, popen_rocprof, run_rocprof


def wait_for_sockets(folder: Path, n: int = 1, timeout: float = 30.0) -> list[Path]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = sorted(folder.rglob(".rocprof-ctl/*.sock"))
        if len(found) >= n:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no control socket appeared under {folder}")


def window_rows(db: Path) -> tuple[list[int], int, int, list[int]]:
    """(request numbers of the window's ranges, window start, window end, their flags)."""
    with open_db(db) as c:
        init, end = c.execute("SELECT init, \"end\" FROM rocpd_info_process").fetchone()
        rows = c.execute(f"SELECT {MESSAGE}, start, end FROM regions ORDER BY start").fetchall()
    numbers = []
    for name, start, stop in rows:
        assert init <= start <= stop <= end, (name, init, start, stop, end)
        m = re.fullmatch(r"(?:req|c)(\d+)", name)
        assert m, name
        numbers.append(int(m.group(1)))
    return numbers, init, end, []


def two_windows(out: Path, name: str, proc: subprocess.Popen) -> list[list[int]]:
    """Two `ctl start --duration 2` windows in a row; each DB checked for its window alone."""
    wait_for_sockets(out)
    assert not list(out.rglob("*.db")), "an --on-demand run recorded before any window"
    windows = []
    for k in (1, 2):
        r = run_rocprof("ctl", "start", "--duration", "2s", out, timeout=60)
        assert r.returncode == 0, r.stderr
        db = Path(r.stdout.strip())
        assert db.is_absolute() and db.name == f"{name}_w{k}_results.db", r.stdout
        numbers, init, end, _ = window_rows(db)
        assert numbers, f"window {k} recorded no ROCTx range"
        # Consecutive requests (nothing of the window lost), and only this window's.
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
        assert 2.0e9 <= end - init <= 2.0e9 + 3.0e9, (init, end)
        windows.append(numbers)
        assert proc.poll() is None, "the program stopped while a window ended"
    assert windows[1][0] > windows[0][-1], "the second window repeats the first's ranges"
    return windows


def finish(proc: subprocess.Popen, stop_file: Path) -> tuple[str, str]:
    stop_file.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out, err


def test_python_server_two_windows_each_its_own_database(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "srv",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        windows = two_windows(out, "srv", proc)
        status = run_rocprof("ctl", "status", out)
        assert status.returncode == 0 and re.search(r"pid \d+: idle \(2 windows", status.stdout)
    finally:
        stdout, stderr = finish(proc, stop_file)
    served = int(stdout.split("served ")[1].split()[0])
    assert windows[1][-1] < served
    assert "--on-demand: nothing is recorded until `rocprof ctl start" in stderr
    # Only the windows' databases, and the socket is gone with the process.
    assert sorted(p.name for p in out.rglob("*.db")) == ["srv_w1_results.db", "srv_w2_results.db"]
    assert not list(out.rglob(".rocprof-ctl/*.sock"))


@pytest.fixture(scope="module")
def c_loop(tmp_path_factory):
    return build_roctx_program(WORKLOADS / "roctx_loop.c", tmp_path_factory.mktemp("c") / "roctx_loop")


def test_native_program_is_controlled_the_same_way(c_loop, tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "c", "--", c_loop, stop_file)
    try:
        two_windows(out, "c", proc)
    finally:
        finish(proc, stop_file)


def test_start_stop_by_pid_and_status_while_recording(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "p",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        sock = wait_for_sockets(out)[0]
        pid = sock.stem
        r = run_rocprof("ctl", "start", pid)
        assert r.returncode == 0, r.stderr
        assert f"pid {pid}: window 1 recording into" in r.stderr and r.stdout == ""
        again = run_rocprof("ctl", "start", pid)
        assert again.returncode == 1 and "already recording window 1" in again.stderr
        status = run_rocprof("ctl", "status", pid)
        assert f"pid {pid}: recording window 1 into " in status.stdout
        time.sleep(0.3)
        stop = run_rocprof("ctl", "stop", pid)
        assert stop.returncode == 0, stop.stderr
        db = Path(stop.stdout.strip())
        numbers, *_ = window_rows(db)  # complete when printed: readable, rows inside the window
        assert numbers
        not_recording = run_rocprof("ctl", "stop", out)
        assert not_recording.returncode == 1 and "not recording" in not_recording.stderr
    finally:
        finish(proc, stop_file)
    missing = run_rocprof("ctl", "status", pid)
    assert missing.returncode == 2 and f"process {pid}" in missing.stderr


def test_window_open_at_exit_is_completed_and_its_waiter_told(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "x",
                         WORKLOADS / "on_demand_server.py", stop_file)
    wait_for_sockets(out)
    ctl = popen_rocprof("ctl", "start", "--duration", "60s", out)
    try:
        end = time.monotonic() + 30
        while not list(out.rglob("x_w1_results.db")) and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.3)
    finally:
        finish(proc, stop_file)
    stdout, stderr = ctl.communicate(timeout=60)
    assert ctl.returncode == 0, stderr
    db = Path(stdout.strip())
    assert db.name == "x_w1_results.db"
    assert window_rows(db)[0]


def test_no_run_found_is_one_line_and_exit_2(tmp_path):
    r = run_rocprof("ctl", "status", tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == f"rocprof ctl: no process of an --on-demand run found under {tmp_path}"


def _as_nobody(path: str) -> str:
    """Connects to the socket at `path` as uid/gid 65534 (a forked child); what it got."""
    import socket

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(path)
                try:
                    s.sendall(b"status\n\n")
                except BrokenPipeError:
                    pass  # refused before the request was read: the answer is waiting
                answer = s.recv(4096).decode()
        except OSError as e:
            answer = f"oserror {e.errno}"
        os.write(w, answer.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        answer = f.read()
    os.waitpid(pid, 0)
    return answer


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the test connects as another uid "
                    "(os.setuid in a forked child)")
def test_another_user_is_refused(tmp_path):
    import errno
    import tempfile

    # A run folder another user can reach (pytest's own base folder is private to root).
    base = Path(tempfile.mkdtemp(prefix="rocprof-ctl-test-"))
    base.chmod(0o755)
    out, stop_file = base / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "sec",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        sock = wait_for_sockets(out)[0]
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        # Permissions alone keep another user out ...
        assert _as_nobody(str(sock)) == f"oserror {errno.EACCES}"
        # ... and with them loosened by mistake, the process itself refuses (SO_PEERCRED).
        sock.parent.chmod(0o711)
        sock.chmod(0o666)
        answer = _as_nobody(str(sock))
        assert answer.startswith("error refused: uid 65534 may not control this process"), answer
        status = run_rocprof("ctl", "status", out)
        assert "idle (0 windows" in status.stdout  # nothing was started by the refused peer
    finally:
        finish(proc, stop_file)
        shutil.rmtree(base, ignore_errors=True)


def test_one_ctl_start_reaches_every_process_of_the_run(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "fam",
                         WORKLOADS / "on_demand_family.py", stop_file)
    try:
        socks = wait_for_sockets(out, n=3)
        status = run_rocprof("ctl", "status", out)
        assert sorted(re.findall(r"pid (\d+): idle", status.stdout)) == sorted(s.stem for s in socks)
        r = run_rocprof("ctl", "start", "--duration", "1s", out, timeout=60)
        assert r.returncode == 0, r.stderr
        dbs = [Path(line) for line in r.stdout.split()]
        assert len(dbs) == 3, r.stdout
        assert re.search(r"3 windows started within [\d.]+ ms of each other", r.stderr), r.stderr
        for db in dbs:
            assert "_w1_" in db.name and window_rows(db)[0], db
        # Each process's window database is its own: the launcher's, the child's, the fork's.
        pids = set()
        for db in dbs:
            with open_db(db) as c:
                pids.add(c.execute("SELECT pid FROM rocpd_info_process").fetchone()[0])
        assert pids == {int(s.stem) for s in socks}
    finally:
        finish(proc, stop_file)


def test_window_option_adds_sampling_for_that_window_only(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "smp",
                         WORKLOADS / "on_demand_busy.py", stop_file)
    try:
        wait_for_sockets(out)
        sampled = run_rocprof("ctl", "start", "--duration", "1s", "--sample", "500", out)
        plain = run_rocprof("ctl", "start", "--duration", "1s", out)
        assert sampled.returncode == plain.returncode == 0, sampled.stderr + plain.stderr
    finally:
        finish(proc, stop_file)
    with open_db(Path(sampled.stdout.strip())) as c:
        init, end = c.execute("SELECT init, \"end\" FROM rocpd_info_process").fetchone()
        times = [t for (t,) in c.execute("SELECT timestamp FROM samples")]
    assert times and all(init <= t <= end for t in times)
    # A busy loop that releases the GIL every iteration (os.path.exists) once kept the sampler's
    # thread from the GIL for seconds: the window armed no thread, or armed it late. Samples
    # must cover the window from its first quarter to its last. (500 Hz of CPU time: ~500 on a
    # quiet machine, fewer where the busy thread gets a fraction of a core.)
    times.sort()
    span = end - init
    assert len(times) >= 50, len(times)
    assert times[0] - init < span / 4 and end - times[-1] < span / 4, (init, times[0], times[-1], end)
    with open_db(Path(plain.stdout.strip())) as c:
        assert c.execute("SELECT count(*) FROM samples").fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM regions").fetchone()[0] > 0


def test_killed_process_leaves_a_socket_that_ctl_clears(tmp_path):
    import signal

    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "k",
                         WORKLOADS / "on_demand_server.py", stop_file)
    sock = wait_for_sockets(out)[0]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert sock.exists()
    r = run_rocprof("ctl", "status", out)
    assert r.returncode == 2, r.stderr
    assert f"rocprof ctl: pid {sock.stem} has ended (its left-over socket removed)" in r.stderr
    assert not sock.exists()


def test_sampled_window_without_samples_names_the_sampled_threads_cause(tmp_path):
    # A window of an idle server at 1 Hz of CPU time takes no sample: the reason recorded must
    # be the sampled Python thread's (it barely used CPU), not the signal mask of the control
    # thread that opened the window (it blocks every signal and runs no Python).
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "idle",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        wait_for_sockets(out)
        r = run_rocprof("ctl", "start", "--duration", "1s", "--sample", "1", out)
        assert r.returncode == 0, r.stderr
    finally:
        finish(proc, stop_file)
    with open_db(Path(r.stdout.strip())) as c:
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["rocprof.sampling.samples_taken"] == "0"
    assert "--sampling-mode cpu" in meta["rocprof.sampling.no_samples"], meta


def test_window_records_the_settings_its_options_added(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "cp",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        wait_for_sockets(out)
        r = run_rocprof("ctl", "start", "--duration", "1s", "--memory-copy-trace", out)
        assert r.returncode == 0, r.stderr
    finally:
        finish(proc, stop_file)
    with open_db(Path(r.stdout.strip())) as c:
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    added = meta["rocprof.on_demand.window_settings"].split()
    assert {"cupti.copies=1", "cupti.sets=1", "hsa.copies=1"} <= set(added), added
