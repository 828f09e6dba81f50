"""Where a process of a `rocprof run --on-demand` run (or one `rocprof attach` armed) serves its
control socket: <output folder>/.rocprof-ctl/<pid>.sock (session/control.hpp says the protocol).
Below the command line: `rocprof ctl` and `rocprof attach` both find sockets here.

Each run is also registered for its user, so that `rocprof ctl` with no folder finds the user's
live runs wherever they write (as `nsys sessions list`): one file per run, <pid>.run, in
$XDG_RUNTIME_DIR/rocprof/ or else <temporary folder>/rocprof-<uid>/. The folder is trusted only
when it is a real folder (not a link) of this user that no one else may enter, and its files
only when they are regular files of this user; a run whose process has ended (or whose pid now
names another process) is left out and its file removed.
"""

from __future__ import annotations

import atexit
import json
import os
import stat
import tempfile
from dataclasses import dataclass

FOLDER = ".rocprof-ctl"  # session/control.hpp: kFolder
_SUFFIX = ".run"
_MAX_ENTRY = 64 << 10


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


class RegistryError(OSError):
    """The registry folder cannot be trusted or made (one line saying why)."""


@dataclass(frozen=True)
class Run:
    pid: int      # the process whose life is the run's: the launcher, or the attached program
    folder: str   # where its processes' sockets are (the run's -d without placeholders)
    command: str  # its command line, for listings


def registry_folder() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "rocprof")
    return os.path.join(tempfile.gettempdir(), f"rocprof-{os.geteuid()}")


def _open_registry(create: bool, path: str | None = None) -> int | None:
    """A descriptor of the registry folder, checked through that descriptor (what is checked
    is what is used); None when it does not exist and `create` is false."""
    path = path or registry_folder()
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise RegistryError(f"{path}: {e.strerror}") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:  # ELOOP or ENOTDIR: a link or a file stands there
        raise RegistryError(f"{path} is not a folder ({e.strerror}): remove it") from None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        os.close(fd)
        raise RegistryError(f"{path} is not a folder only this user can enter (owner uid "
                            f"{st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}): remove it")
    return fd


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks after boot): with the pid, it names one process.
    None when it has ended (a zombie has too: its parent has not collected it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return None if fields[0] in (b"Z", b"X") else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().rstrip(b"\0").split(b"\0")
    except OSError:
        return ""
    text = " ".join(w.decode(errors="replace") for w in words)
    return text if len(text) <= 160 else text[:157] + "..."


def register(folder: str, pid: int | None = None) -> str | None:
    """Registers the run whose sockets are under `folder`, alive as long as process `pid` (by
    default this one, whose exit removes the entry). Returns why it could not, or None."""
    own = pid is None
    pid = os.getpid() if own else pid
    start = _start_time(pid)
    if start is None:
        return f"process {pid} does not exist"
    entry = json.dumps({"pid": pid, "start": start, "folder": os.path.abspath(folder),
                        "command": _command_line(pid)}).encode()
    folder_path = registry_folder()
    try:
        dfd = _open_registry(create=True, path=folder_path)
    except RegistryError as e:
        return str(e)
    try:
        tmp, name = f".{pid}.tmp", f"{pid}{_SUFFIX}"
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dfd)
        try:
            os.write(fd, entry)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)  # readers see all of it or none
    except OSError as e:
        return f"{folder_path}: {e.strerror}"
    finally:
        os.close(dfd)
    if own:
        atexit.register(_unregister, folder_path, pid, start)
    return None


def _unregister(folder_path: str, pid: int, start: int) -> None:
    if os.getpid() != pid:  # a fork child leaving: the run goes on
        return
    try:
        dfd = _open_registry(create=False, path=folder_path)
    except RegistryError:
        return
    if dfd is None:
        return
    try:
        run = _read(dfd, f"{pid}{_SUFFIX}")
        if run is not None and run[1] == start:
            os.unlink(f"{pid}{_SUFFIX}", dir_fd=dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _read(dfd: int, name: str) -> tuple[Run, int] | None:
    """The run a registry file names and its process's start time; None for anything else
    (not a regular file of this user, not an entry)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        data = json.loads(os.read(fd, _MAX_ENTRY))
        run = Run(int(data["pid"]), str(data["folder"]), str(data.get("command", "")))
        return run, int(data["start"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    finally:
        os.close(fd)


def live_runs() -> list[Run]:
    """The user's registered runs whose process still lives, by pid; ended runs' files are
    removed. RegistryError when the registry folder cannot be trusted."""
    dfd = _open_registry(create=False)
    if dfd is None:
        return []
    runs = []
    try:
        for name in os.listdir(dfd):
            if not name.endswith(_SUFFIX):
                continue
            found = _read(dfd, name)
            if found is None:
                continue
            run, start = found
            if name == f"{run.pid}{_SUFFIX}" and _start_time(run.pid) == start:
                runs.append(run)
                continue
            try:
                os.unlink(name, dir_fd=dfd)
            except OSError:
                pass
    finally:
        os.close(dfd)
    return sorted(runs, key=lambda r: r.pid)
