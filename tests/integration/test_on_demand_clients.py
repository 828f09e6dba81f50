"""The control socket of an --on-demand process against clients that misbehave: one that
trickles its request, and thousands of connections held open. `rocprof ctl` must still be
answered, and the program must keep running and keep few descriptors of ours."""

from __future__ import annotations

import errno
import os
import resource
import socket
import threading
import time
from pathlib import Path

import pytest
from support import WORKLOADS, popen_rocprof, run_rocprof
from test_on_demand import finish, wait_for_sockets


@pytest.fixture
def server(tmp_path):
    out, stop_file = tmp_path / "out", tmp_path / "stop"
    proc = popen_rocprof("run", "--on-demand", "-d", out, "-o", "cl",
                         WORKLOADS / "on_demand_server.py", stop_file)
    try:
        yield out, wait_for_sockets(out)[0]
        assert proc.poll() is None, "the program ended while clients misbehaved"
    finally:
        finish(proc, stop_file)


def _trickle(path: Path, stop: threading.Event, connected: list[int]) -> None:
    """Sends a request one byte at a time, never finishing it, for as long as `stop` is clear;
    connects again whenever the process drops it."""
    while not stop.is_set():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(str(path))
                connected[0] += 1
                while not stop.wait(0.2):
                    s.sendall(b"s")
            except OSError:
                pass


def test_a_trickling_client_does_not_hold_ctl(server):
    out, sock = server
    stop, connected = threading.Event(), [0]
    slow = threading.Thread(target=_trickle, args=(sock, stop, connected), daemon=True)
    slow.start()
    try:
        while connected[0] == 0:
            stop.wait(0.05)
        # A client the process waited on would hold this request until --timeout.
        r = run_rocprof("ctl", "status", "--timeout", "30s", out, timeout=90)
        still_trickling = slow.is_alive()
    finally:
        stop.set()
        slow.join(10)
    assert r.returncode == 0, r.stderr
    assert f"pid {sock.stem}: idle (0 windows" in r.stdout
    assert still_trickling


def test_thousands_of_held_connections_leave_ctl_working(server):
    out, sock = server
    n = 3000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n + 100:
        pytest.skip(f"this test holds {n} sockets; RLIMIT_NOFILE allows {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, n + 100), hard))
    held = []
    give_up = time.monotonic() + 120  # a process that stops accepting fails the test here
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            held.append(s)
            s.setblocking(False)
            while s.connect_ex(str(sock)) == errno.EAGAIN:  # its listen queue is full
                assert time.monotonic() < give_up, f"{len(held)} connections: no more accepted"
                time.sleep(0.001)
        status = run_rocprof("ctl", "status", "--timeout", "30s", out, timeout=90)
        assert status.returncode == 0, status.stderr
        started = run_rocprof("ctl", "start", "--duration", "1s", "--timeout", "30s", out,
                              timeout=90)
        assert started.returncode == 0, started.stderr
        assert Path(started.stdout.strip()).name == "cl_w1_results.db"
        # The process keeps a bounded number of them, not one descriptor per connection.
        assert len(os.listdir(f"/proc/{sock.stem}/fd")) < 500
    finally:
        for s in held:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
