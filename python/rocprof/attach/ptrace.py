"""Loading our library into a running process through ptrace (x86-64 Linux), as rocprofv3
--attach and gdb's `call dlopen(...)` do: stop the main thread, make it call
dlopen(librocprof_inject.so) and then rocprof_attach_arm(template, settings), restore it, let
it go. The calls return to address 0; the SIGSEGV that follows marks their end.

The target's libc must be the file ours is (same machine image): dlopen's address there is its
libc's base plus the offset of dlopen in our copy."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal

PTRACE_PEEKDATA, PTRACE_POKEDATA = 2, 5
PTRACE_CONT, PTRACE_GETREGS, PTRACE_SETREGS = 7, 12, 13
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
RTLD_NOW, RTLD_GLOBAL = 2, 0x100

_FIELDS = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags "
           "rsp ss fs_base gs_base ds es fs gs").split()


class Regs(ctypes.Structure):  # struct user_regs_struct (sys/user.h, x86-64)
    _fields_ = [(f, ctypes.c_ulonglong) for f in _FIELDS]


class AttachError(Exception):
    """One line for the user: why the process could not be attached."""


class InjectionRefused(AttachError):
    """Our code cannot be run in the process (ptrace refused, another C library or machine,
    the load failed, remote debugging off): `--method auto` samples it read-only instead."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def _ptrace(req: int, pid: int, addr: int = 0, data=0) -> int:
    ctypes.set_errno(0)
    r = _libc.ptrace(req, pid, ctypes.c_void_p(addr), data if isinstance(data, ctypes.c_void_p)
                     else ctypes.c_void_p(data))
    e = ctypes.get_errno()
    if r == -1 and e != 0:
        raise OSError(e, os.strerror(e))
    return r


def refusal(pid: int, e: OSError, action: str = "") -> str:
    """Why ptrace (or another use of the kernel's ptrace access check: `action`, e.g. reading
    the memory of pid) was refused, naming the setting that decides it."""
    scope = "unknown (no Yama)"
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            scope = f.read().strip()
    except OSError:
        pass
    action = action or f"ptrace of pid {pid}"
    return (f"rocprof attach: {action} refused ({errno.errorcode.get(e.errno, e.errno)}):"
            f" kernel.yama.ptrace_scope is {scope} (0 lets a user trace its own processes; set "
            "with `sysctl kernel.yama.ptrace_scope=0`), or this process lacks CAP_SYS_PTRACE "
            "(containers: --cap-add SYS_PTRACE; a seccomp profile may also forbid ptrace)")


def mapped_files(pid: int | str):
    """(start address, path) of each file mapping of process pid, from /proc/<pid>/maps. The
    path is the rest of the line after five fields: it may hold spaces (a venv under "My
    Projects"), so it is not split off with the others."""
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            parts = line.rstrip("\n").split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                yield int(parts[0].split("-")[0], 16), parts[5]


def _mapping_base(pid: int | str, path: str) -> int | None:
    starts = [start for start, file in mapped_files(pid) if os.path.realpath(file) == path]
    return min(starts, default=None)


def _libc_path(pid: int | str) -> str | None:
    for _start, file in mapped_files(pid):
        if os.path.basename(file).startswith("libc.so"):
            return os.path.realpath(file)
    return None


def remote_address(pid: int, local_lib: str, symbol: str) -> int:
    """Where `symbol` of the library file `local_lib` (loaded here too) lies in process pid."""
    lib = ctypes.CDLL(local_lib)
    local = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    here, there = _mapping_base("self", local_lib), _mapping_base(pid, local_lib)
    if here is None or there is None or local is None:
        raise InjectionRefused(f"rocprof attach: {os.path.basename(local_lib)} is not mapped in pid "
                          f"{pid}")
    return there + (local - here)


class Tracee:
    """The stopped main thread of `pid`, on which functions are called."""

    def __init__(self, pid: int):
        self.pid = pid
        try:
            _ptrace(PTRACE_ATTACH, pid)
        except OSError as e:
            if e.errno in (errno.EPERM, errno.EACCES):
                raise InjectionRefused(refusal(pid, e)) from None
            raise AttachError(f"rocprof attach: pid {pid}: {e.strerror}") from None
        self._wait_stop()
        self.saved = self.regs()

    def _wait_stop(self) -> int:
        while True:
            _, status = os.waitpid(self.pid, 0x40000000)  # __WALL
            if os.WIFSTOPPED(status):
                return os.WSTOPSIG(status)
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                raise AttachError(f"rocprof attach: pid {self.pid} ended while attached")

    def regs(self) -> Regs:
        r = Regs()
        _ptrace(PTRACE_GETREGS, self.pid, 0, ctypes.c_void_p(ctypes.addressof(r)))
        return r

    def set_regs(self, r: Regs) -> None:
        _ptrace(PTRACE_SETREGS, self.pid, 0, ctypes.c_void_p(ctypes.addressof(r)))

    def peek(self, addr: int) -> int:
        return _ptrace(PTRACE_PEEKDATA, self.pid, addr) & 0xFFFFFFFFFFFFFFFF

    def poke(self, addr: int, word: int) -> None:
        _ptrace(PTRACE_POKEDATA, self.pid, addr, ctypes.c_void_p(word))

    def scratch_at(self, n: int) -> int:
        """Where call() copies `scratch` of n bytes: below the stack and its red zone."""
        return (self.saved.rsp - 256 - n - 64) & ~0xF

    def call(self, func: int, *args: int, scratch: bytes = b"") -> int:
        """func(*args) on the stopped thread, `scratch` copied to scratch_at(len(scratch))
        first; what it returned (rax). Memory and registers are restored after."""
        r = Regs.from_buffer_copy(self.saved)
        top = self.scratch_at(len(scratch))
        data = scratch + b"\0" * (-len(scratch) % 8)
        saved_words = [(top + i, self.peek(top + i)) for i in range(0, len(data), 8)]
        rsp = top - 64
        saved_words.append((rsp - 8, self.peek(rsp - 8)))
        try:
            for i in range(0, len(data), 8):
                self.poke(top + i, int.from_bytes(data[i:i + 8], "little"))
            self.poke(rsp - 8, 0)  # the return address: the call ends in a fault at 0
            r.rsp = rsp - 8
            r.rip = func
            r.rax = 0
            r.orig_rax = 0xFFFFFFFFFFFFFFFF  # no syscall restart moves rip back
            for name, value in zip(("rdi", "rsi", "rdx", "rcx"), args, strict=False):
                setattr(r, name, value & 0xFFFFFFFFFFFFFFFF)
            self.set_regs(r)
            _ptrace(PTRACE_CONT, self.pid, 0, 0)
            while True:
                sig = self._wait_stop()
                if sig == signal.SIGSEGV and self.regs().rip == 0:
                    break
                if sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT):
                    raise AttachError(f"rocprof attach: the call faulted in pid {self.pid} "
                                      f"(signal {sig})")
                _ptrace(PTRACE_CONT, self.pid, 0, 0)  # another signal: held for later
            return self.regs().rax
        finally:
            for addr, word in saved_words:
                self.poke(addr, word)

    def detach(self) -> None:
        try:
            self.set_regs(self.saved)
        finally:
            _ptrace(PTRACE_DETACH, self.pid, 0, 0)


def inject(pid: int, library: str, template: str, settings_text: str) -> int:
    """Loads `library` into pid and calls rocprof_attach_arm there; its result code."""
    if platform.machine() != "x86_64":
        raise InjectionRefused(f"rocprof attach: ptrace loading is implemented for x86-64, not "
                          f"{platform.machine()}")
    libc = _libc_path(pid)
    if libc is None or libc != _libc_path("self"):
        raise InjectionRefused(f"rocprof attach: pid {pid} uses another C library ({libc}) than "
                          "rocprof's: attach from the same machine image")
    dlopen = remote_address(pid, libc, "dlopen")
    library = os.path.realpath(library)
    t = Tracee(pid)
    try:
        path = library.encode() + b"\0"
        handle = t.call(dlopen, t.scratch_at(len(path)), RTLD_NOW | RTLD_GLOBAL, scratch=path)
        if handle == 0:
            raise InjectionRefused(f"rocprof attach: dlopen({library}) failed in pid {pid}")
        arm = remote_address(pid, library, "rocprof_attach_arm")
        blob = template.encode() + b"\0"
        args = blob + settings_text.encode() + b"\0"
        top = t.scratch_at(len(args))
        return ctypes.c_int(t.call(arm, top, top + len(blob), scratch=args) & 0xFFFFFFFF).value
    finally:
        t.detach()
