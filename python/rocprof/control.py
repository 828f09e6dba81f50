"""Where a process of a `rocprof run --on-demand` run (or one `rocprof attach` armed) serves its
control socket: <output folder>/.rocprof-ctl/<pid>.sock (session/control.hpp says the protocol).
Below the command line: `rocprof ctl` and `rocprof attach` both find sockets here."""

from __future__ import annotations

import os

FOLDER = ".rocprof-ctl"  # session/control.hpp: kFolder


def socket_of_pid(pid: int) -> list[str]:
    """The listening socket a process bound under a .rocprof-ctl folder (/proc/net/unix)."""
    suffix = f"/{FOLDER}/{pid}.sock"
    try:
        with open("/proc/net/unix") as f:
            paths = [line.split()[-1] for line in f if line.rstrip().endswith(suffix)]
    except OSError:
        paths = []
    if not paths:
        alive = os.path.exists(f"/proc/{pid}")
        raise FileNotFoundError(
            f"rocprof ctl: process {pid} " + ("serves no control socket (not started by "
                                              "`rocprof run --on-demand`; see `rocprof attach`)"
                                              if alive else "does not exist"))
    return sorted(set(paths))
