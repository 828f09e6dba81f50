"""Ctrl-C to `rocprof run -- python script.py`: at a real terminal, which sends SIGINT to the
whole foreground process group (the launcher and the program), and without one, as a
supervisor's `kill -INT -PGID` does. The program gets it once and only its own output appears
(its KeyboardInterrupt traceback), never rocprof's, on any of 20 tries each."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time

import pytest
from support import WORKLOADS, _env

TRIES = 20


def _read_until(master, want: bytes | None, timeout: float) -> bytes:
    out, end = b"", time.monotonic() + timeout
    while time.monotonic() < end and (want is None or want not in out):
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has ended
                break
            if not chunk:
                break
            out += chunk
    return out


def _ctrl_c_once(tmp_path, wait: float) -> tuple[int, str]:
    master, slave = os.openpty()

    def own_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the new session's terminal: its group is foreground
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    p = subprocess.Popen([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "c",
                          "--", sys.executable, str(WORKLOADS / "exit_with.py"), "interrupt"],
                         stdin=slave, stdout=slave, stderr=slave, env=_env(),
                         preexec_fn=own_terminal)
    os.close(slave)
    try:
        out = _read_until(master, b"ready", 60)
        assert b"ready" in out, out.decode(errors="replace")
        time.sleep(wait)
        os.write(master, b"\x03")  # the terminal's interrupt character: SIGINT to the group
        out += _read_until(master, None, 60)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    return p.returncode, out.decode(errors="replace").replace("\r\n", "\n")


def _only_the_programs_traceback(k: int, code: int, out: str) -> None:
    assert code == -signal.SIGINT, (k, code, out)
    assert "Exception ignored" not in out and "lost sys.stderr" not in out, (k, out)
    frames = [ln for ln in out.splitlines() if ln.lstrip().startswith("File ")]
    assert frames and all("exit_with.py" in ln for ln in frames), (k, out)


@pytest.mark.slow
def test_ctrl_c_shows_only_the_programs_own_traceback(tmp_path):
    for k in range(TRIES):
        folder = tmp_path / str(k)
        folder.mkdir()
        code, out = _ctrl_c_once(folder, 0.05 * (k % 5))
        _only_the_programs_traceback(k, code, out)
        assert "KeyboardInterrupt" in out, (k, out)


def _group_sigint_once(tmp_path, wait: float) -> tuple[int, str]:
    # No controlling terminal (a new session without one), the signal to the launcher's group.
    p = subprocess.Popen([sys.executable, "-m", "rocprof", "run", "-d", str(tmp_path), "-o", "c",
                          "--", sys.executable, str(WORKLOADS / "exit_with.py"), "interrupt"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=_env(), text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline().startswith("ready")
        time.sleep(wait)
        os.killpg(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, out


@pytest.mark.slow
def test_sigint_to_the_group_without_a_terminal_reaches_the_program_once(tmp_path):
    for k in range(TRIES):
        folder = tmp_path / str(k)
        folder.mkdir()
        code, out = _group_sigint_once(folder, 0.05 * (k % 5))
        _only_the_programs_traceback(k, code, out)
        assert out.count("KeyboardInterrupt") == 1, (k, out)
