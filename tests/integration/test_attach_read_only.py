"""`rocprof attach PID --method read-only`: a plain Python process (never started by rocprof) is
sampled from outside, by reading its memory, and runs on untouched: same output, same exit
status. The samples are read back with rocpd's own readers, as `rocprof run --sample`'s are."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support import WORKLOADS, open_db, pythons_here, run_rocprof
from test_attach import PTRACE

import rocpd
from rocpd.summary import samples

TARGET = WORKLOADS / "read_only_target.py"


def line_of(marker: str) -> int:
    lines = TARGET.read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.endswith(f"  {marker}"))


def start(python: str = sys.executable, *args: str, **popen) -> subprocess.Popen:
    """The target, spinning; a plain process (no rocprof on its path)."""
    env = {"PATH": os.environ["PATH"]}
    proc = subprocess.Popen([python, TARGET, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **popen)
    assert proc.stdout.readline() == "ready\n", proc.stderr.read()
    return proc


def finish(proc: subprocess.Popen) -> None:
    """Stops the target the way it expects, and checks it ran on as if never sampled."""
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=30)
    assert (out, err, proc.returncode) == ("stopped\n", "", 3)


def attach(pid: int, out: Path, *extra: str, duration: str | None = "1s"):
    args = ["attach", str(pid), "-d", out, *extra]
    if duration:
        args += ["--duration", duration]
    return run_rocprof(*args, timeout=60)


def leaves(db_path: str) -> dict[int, Counter]:
    """Per thread: how many samples had each (function, line) innermost."""
    db = rocpd.connect(db_path)
    stacks = samples.Stacks(db)
    out: dict[int, Counter] = {}
    for guid, _pid, tid, _ts, sid in samples.sample_rows(db):
        f = stacks.frames(guid, sid)[-1]
        out.setdefault(tid, Counter())[(f.function, f.line)] += 1
    return out


def share(counter: Counter, key) -> float:
    return counter[key] / max(1, sum(counter.values()))


def test_plain_python_process_is_sampled_and_runs_on_untouched(tmp_path):
    proc = start()
    try:
        r = attach(proc.pid, tmp_path, "--method", "read-only")
    finally:
        finish(proc)
    assert r.returncode == 0, r.stderr
    db = r.stdout.strip()
    assert Path(db).is_absolute() and Path(db).name == f"{proc.pid}_results.db", r.stdout
    assert re.search(rf"pid {proc.pid}: sampling its Python \d+\.\d+ \((headers|debug offsets)\) "
                     r"stacks read-only "
                     r"at 100 Hz \(cpu mode\) for 1 s", r.stderr), r.stderr
    by_thread = leaves(db)
    assert list(by_thread) == [proc.pid], by_thread  # the main thread only: one spins
    main = by_thread[proc.pid]
    assert sum(main.values()) >= 30, main  # ~100 at 100 Hz for 1 s, on a busy machine fewer
    assert share(main, ("busy", line_of("BUSY"))) >= 0.8, main
    info = samples.sampling_info(rocpd.connect(db))
    assert (info["hz"], info["mode"], info["native"]) == ("100", "cpu", "0"), info
    with open_db(db) as c:
        # The database is the target's, as if it had recorded itself.
        pid, command = c.execute("SELECT pid, command FROM rocpd_info_process").fetchone()
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata "
                              "WHERE tag LIKE 'rocprof.attach%'"))
        threads = {t for (t,) in c.execute("SELECT tid FROM rocpd_info_thread")}
    assert pid == proc.pid and str(TARGET) in command, command
    assert meta["rocprof.attach.method"] == "read-only", meta
    assert threads == {proc.pid}, threads  # none of the attacher's own threads


def test_a_python_under_a_path_with_spaces_is_sampled(tmp_path):
    # The interpreter is found by the file holding it in the target's memory map, whose lines
    # end with the path, spaces included ("My Projects/.venv/..."). Where this Python runs from
    # a libpython, that is copied there (LD_LIBRARY_PATH comes before the executable's
    # RUNPATH); else the executable itself (Debian's python3.X holds the interpreter while a
    # libpython is installed beside it).
    folder = tmp_path / "My Projects"
    folder.mkdir()
    env = {"PATH": os.environ["PATH"]}
    python = sys.executable
    with open("/proc/self/maps") as maps:
        libpython = next((line[line.index("/"):].strip() for line in maps
                          if "/libpython" in line), None)
    if libpython:
        shutil.copy2(libpython, folder / os.path.basename(libpython))
        env["LD_LIBRARY_PATH"] = str(folder)
    else:
        real = os.path.realpath(sys.executable)  # python3.X: the name says the version
        python = str(folder / os.path.basename(real))
        shutil.copy2(real, python)
        env["PYTHONHOME"] = sys.base_prefix
    proc = subprocess.Popen([python, TARGET], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline() == "ready\n", proc.stderr.read()
    try:
        with open(f"/proc/{proc.pid}/maps") as maps:
            assert str(folder) + "/" in maps.read()
        r = attach(proc.pid, tmp_path / "out", "--method", "read-only")
    finally:
        finish(proc)
    assert r.returncode == 0, r.stderr
    main = leaves(r.stdout.strip())[proc.pid]
    assert share(main, ("busy", line_of("BUSY"))) >= 0.8, main


def test_each_thread_is_sampled_with_its_own_stack(tmp_path):
    proc = start(sys.executable, "threads")
    try:
        r = attach(proc.pid, tmp_path, "--method", "read-only", "--sampling-mode", "wall")
    finally:
        finish(proc)
    assert r.returncode == 0, r.stderr
    by_thread = leaves(r.stdout.strip())
    assert len(by_thread) == 2 and proc.pid in by_thread, by_thread
    worker = next(t for t in by_thread if t != proc.pid)
    assert share(by_thread[proc.pid], ("busy", line_of("BUSY"))) >= 0.8, by_thread
    assert share(by_thread[worker], ("worker", line_of("WORKER"))) >= 0.8, by_thread
    # Wall mode: every thread at every tick, whichever holds the GIL.
    assert abs(sum(by_thread[proc.pid].values()) - sum(by_thread[worker].values())) <= 5


def test_sampling_ends_with_the_process(tmp_path):
    proc = start(sys.executable, "exit_after=2")
    r = attach(proc.pid, tmp_path, "--method", "read-only", duration=None)
    out, err = proc.communicate(timeout=30)
    assert (out, err, proc.returncode) == ("stopped\n", "", 3)
    assert r.returncode == 0, r.stderr
    assert "; the process ended" in r.stderr, r.stderr
    assert share(leaves(r.stdout.strip())[proc.pid], ("busy", line_of("BUSY"))) >= 0.8


def test_auto_samples_read_only_when_only_python_stacks_are_asked(tmp_path):
    proc = start()
    try:
        r = attach(proc.pid, tmp_path, "--sample", "200")
    finally:
        finish(proc)
    assert r.returncode == 0, r.stderr
    first = r.stderr.splitlines()[0]
    assert re.fullmatch(rf"rocprof attach: pid {proc.pid} runs Python \d+\.\d+: ptrace loading "
                        r"samples no Python stacks \(.*\), so they are sampled read-only",
                        first), r.stderr
    assert share(leaves(r.stdout.strip())[proc.pid], ("busy", line_of("BUSY"))) >= 0.8


PTRACE_SEIZE = 0x4206


@pytest.mark.skipif(not PTRACE, reason="ptrace is not permitted here: the tracer that "
                    "holds the target (and the injection refused) cannot be set up")
def test_auto_falls_back_to_read_only_when_injection_is_refused(tmp_path):
    # A process already traced (a debugger holds it) refuses a second tracer: PTRACE_ATTACH
    # fails with EPERM whatever the privileges, as under ptrace_scope or in a container.
    proc = start()
    tracer = subprocess.Popen([sys.executable, "-c", (
        "import ctypes, sys, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"ok = libc.ptrace({PTRACE_SEIZE}, {proc.pid}, None, None) == 0\n"
        "print('held' if ok else f'errno {ctypes.get_errno()}', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert tracer.stdout.readline() == "held\n"
        r = attach(proc.pid, tmp_path)
    finally:
        tracer.kill()  # detaches: the target's signals are its own again
        tracer.wait()
        finish(proc)
    assert r.returncode == 0, r.stderr
    first = r.stderr.splitlines()[0]
    assert re.fullmatch(rf"rocprof attach: ptrace of pid {proc.pid} refused \(EPERM\): "
                        r"kernel\.yama\.ptrace_scope is .*CAP_SYS_PTRACE.*; sampling its Python "
                        r"stacks read-only instead", first), r.stderr
    assert share(leaves(r.stdout.strip())[proc.pid], ("busy", line_of("BUSY"))) >= 0.8


def test_gpu_options_need_injection(tmp_path):
    proc = start()
    try:
        r = attach(proc.pid, tmp_path, "--method", "read-only", "--kernel-trace")
    finally:
        finish(proc)
    assert r.returncode == 1
    assert r.stderr == ("rocprof attach: read-only sampling records Python stacks only: "
                        "--kernel-trace needs our library in the process (--method ptrace or "
                        "remote-exec)\n")
    assert not any(tmp_path.iterdir())


# ---- another user ------------------------------------------------------------------------

NOBODY = 65534


def _as_nobody(pid: int, template: str) -> str:
    """rocprof.attach.readonly.sample(pid) from a forked child running as uid/gid 65534: the
    one line it was refused with, or what it returned."""
    from rocprof import _core  # noqa: F401  loaded before the uid changes
    from rocprof.attach import AttachError, readonly

    r, w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.close(r)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                text = "sampled " + readonly.sample(pid, template, 100, False, 0.2)
            except AttachError as e:
                text = str(e)
            os.write(w, text.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(child, 0)
    return text


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the test runs the "
                                "attacher or the target as another uid")


@needs_root
def test_another_users_process_is_refused(tmp_path):
    proc = start()  # root's
    try:
        text = _as_nobody(proc.pid, str(tmp_path / "x_results.db"))
    finally:
        finish(proc)
    assert text == (f"rocprof attach: process {proc.pid} belongs to uid 0: only that user or "
                    "root may attach")


def _python_for_anyone() -> str | None:
    """A python3 that another user may run: every folder on its way searchable by all."""
    exe = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    if exe is None:
        return None
    real = Path(exe).resolve()
    if not all(p.stat().st_mode & 0o001 for p in [real, *real.parents]):
        return None
    return str(real)


@needs_root
@pytest.mark.skipif(_python_for_anyone() is None, reason="no python3 that uid 65534 may run")
def test_memory_read_refused_by_the_kernel_is_one_line_naming_the_setting(tmp_path):
    # The same user, but a process that made itself non-dumpable (as ssh-agent and setuid
    # programs are): the kernel's ptrace access check refuses to read it without
    # CAP_SYS_PTRACE. A program from outside the checkout, which uid 65534 may not read.
    code = ("import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); "  # PR_SET_DUMPABLE
            "print('ready', flush=True); time.sleep(30)")
    proc = subprocess.Popen([_python_for_anyone(), "-c", code], stdout=subprocess.PIPE,
                            text=True, user=NOBODY, group=NOBODY, cwd="/",
                            env={"PATH": os.environ["PATH"]})
    try:
        assert proc.stdout.readline() == "ready\n"
        text = _as_nobody(proc.pid, str(tmp_path / "x_results.db"))
    finally:
        proc.kill()
        proc.wait()
    assert re.fullmatch(rf"rocprof attach: reading the memory of pid {proc.pid} "
                        r"\(process_vm_readv\) refused \((EACCES|EPERM)\): kernel\.yama\.ptrace_scope "
                        r"is .* or this process lacks CAP_SYS_PTRACE .*", text), text


# ---- the attach matrix: every Python on this machine -----------------------------------------


PYTHONS = [(exe, version) for exe, version, _ in pythons_here()]


def _readable(version: tuple[int, int]) -> bool:
    """What read-only sampling reads: 3.13 (its _Py_DebugOffsets table, whose layout is
    known), and the Python _core is built for (its headers)."""
    return version == sys.version_info[:2] or version == (3, 13)


@pytest.mark.parametrize("python,version", PYTHONS, ids=[f"{v[0]}.{v[1]}" for _, v in PYTHONS])
def test_every_python_here_is_sampled_or_refused_in_one_line(python, version, tmp_path):
    proc = start(python)
    try:
        r = attach(proc.pid, tmp_path, "--method", "read-only", duration="500ms")
    finally:
        finish(proc)
    if not _readable(version):
        assert r.returncode == 1
        assert r.stderr == (
            f"rocprof attach: pid {proc.pid} runs Python {version[0]}.{version[1]}; read-only "
            f"sampling here reads Python {sys.version_info[0]}.{sys.version_info[1]} (the "
            "version rocprof is installed for) and Python 3.13 (its _Py_DebugOffsets): run a "
            "rocprof installed for that Python, or --method ptrace\n")
        return
    assert r.returncode == 0, r.stderr
    source = "debug offsets" if version >= (3, 13) else "headers"
    assert f"Python {version[0]}.{version[1]} ({source})" in r.stderr, r.stderr
    assert share(leaves(r.stdout.strip())[proc.pid], ("busy", line_of("BUSY"))) >= 0.8


def test_system_python_build_is_sampled(tmp_path):
    """Another build of this version (the distribution's, often a static executable rather
    than a libpython) is found and read with the same layout."""
    system = Path(f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}")
    if not system.exists() or system.resolve() == Path(sys.executable).resolve():
        pytest.skip(f"no other build of Python {sys.version_info[0]}.{sys.version_info[1]} "
                    f"at {system}")
    proc = start(str(system))
    try:
        r = attach(proc.pid, tmp_path, "--method", "read-only")
    finally:
        finish(proc)
    assert r.returncode == 0, r.stderr
    assert share(leaves(r.stdout.strip())[proc.pid], ("busy", line_of("BUSY"))) >= 0.8
