"""Kernel-name regexes in the one dialect the whole tool uses: glibc's POSIX extended regular
expressions (``regcomp(REG_EXTENDED | REG_NOSUB)`` + ``regexec``), the engine the native capture
applies ``--kernel-include-regex``/``--kernel-exclude-regex`` with. The launcher validates with
:func:`compile`, and rocpd's filters match with it, so a pattern means the same thing in capture,
in the CLI and in analysis.

What works (POSIX ERE): literal text (matched anywhere in the name unless anchored), ``.``,
alternation ``a|b``, groups ``( )``, bracket expressions ``[0-9]``, ``[^_]``, ``[[:digit:]]``,
``[[:alpha:]]``, ``[[:space:]]``, anchors ``^`` and ``$``, quantifiers ``* + ?`` and ``{m}``,
``{m,}``, ``{m,n}``, and ``\\`` before a punctuation character to take it literally (``\\.``,
``\\(``). Matching is case-sensitive.

What does not (Python/PCRE only): ``\\d \\w \\s \\D \\W \\S \\b \\B`` and any other backslash-letter
escape (write ``[0-9]``, ``[[:alnum:]_]``, ``[[:space:]]``), lazy or possessive quantifiers
(``*?``, ``+?``, ``*+``), lookarounds ``(?=…)``, non-capturing groups ``(?:…)`` and inline flags
``(?i)``. glibc reads some of these as something else without complaint (``\\d`` is the letter d,
``x*?`` is ``(x*)?``), so :func:`compile` refuses them instead of letting them match silently wrong.

Characters are those of the process locale (LC_CTYPE); kernel names are ASCII in practice.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
import threading

# Values from glibc's <regex.h> (musl's agree); macOS swaps NOSUB and NEWLINE.
REG_EXTENDED, REG_ICASE, REG_NEWLINE, REG_NOSUB = 1, 2, 4, 8
if sys.platform == "darwin":
    REG_NEWLINE, REG_NOSUB = 8, 4
REG_NOMATCH = 1
_FLAGS = REG_EXTENDED | REG_NOSUB

# glibc's regex_t is 64 bytes on x86_64 (32 on macOS); it is opaque here, so it gets a generous
# 256 bytes, and an array of uint64 so that its alignment is at least that of the pointers inside.
_REGEX_T_WORDS = 32

HINT = r"(POSIX extended syntax: use [0-9] not \d, no (?i) flags)"
_CACHE_MAX = 1 << 16  # distinct names remembered per regex; kernel names repeat, a run has few

# Backslash-letter escapes POSIX leaves undefined: what glibc makes of them, or what to write.
_ESCAPES = {"w": "use [[:alnum:]_]", "W": "use [^[:alnum:]_]", "s": "use [[:space:]]",
            "S": "use [^[:space:]]", "b": "a GNU word boundary; use ^, $ or [^[:alnum:]_]",
            "B": "a GNU non-boundary; not portable"}
_INTERVAL = re.compile(r"\{[0-9]*(,[0-9]*)?\}")

_lib = None
_lib_lock = threading.Lock()


def _libc():
    global _lib
    with _lib_lock:
        if _lib is None:
            lib = ctypes.CDLL(None)  # the libc this interpreter (and the capture library) runs on
            if not hasattr(lib, "regcomp"):
                lib = ctypes.CDLL(ctypes.util.find_library("c"))
            lib.regcomp.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
            lib.regcomp.restype = ctypes.c_int
            lib.regexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.c_void_p, ctypes.c_int]
            lib.regexec.restype = ctypes.c_int
            lib.regerror.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
            lib.regerror.restype = ctypes.c_size_t
            lib.regfree.argtypes = [ctypes.c_void_p]
            lib.regfree.restype = None
            _lib = lib
        return _lib


def _shown(pattern: str) -> str:
    # The message must stay one line whatever the pattern holds.
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in pattern)


def _error(pattern: str, why: str) -> ValueError:
    return ValueError(f"invalid kernel regex '{_shown(pattern)}': {why} {HINT}")


def _bracket_end(p: str, i: int) -> int:
    """Index just past the bracket expression opening at p[i] ('['); len(p) if unterminated."""
    j = i + 1
    if p[j:j + 1] == "^":
        j += 1
    if p[j:j + 1] == "]":  # a leading ] is a member, not the end
        j += 1
    while j < len(p):
        if p[j] == "[" and p[j + 1:j + 2] in (":", ".", "="):
            close = p.find(p[j + 1] + "]", j + 2)
            j = close + 2 if close >= 0 else j + 1
        elif p[j] == "]":
            return j + 1
        else:
            j += 1
    return len(p)


def unsupported(pattern: str) -> str | None:
    """Why glibc would accept ``pattern`` but mean something other than Python would, or None."""
    if "\0" in pattern:
        return "NUL character in the pattern (a C string ends there)"
    i, after_quantifier = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if nxt.isascii() and nxt.isalpha():
                why = _ESCAPES.get(nxt, f"glibc reads it as a literal '{nxt}'")
                return f"\\{nxt} is not POSIX ({why})"
            i, after_quantifier = i + 2, False
        elif c == "[":
            i, after_quantifier = _bracket_end(pattern, i), False
        elif c in "?+" and after_quantifier:
            return (f"lazy or possessive quantifier '{pattern[i - 1]}{c}' is not POSIX"
                    " (glibc would read it as greedy)")
        elif c in "*+?":
            i, after_quantifier = i + 1, True
        elif c == "{" and (m := _INTERVAL.match(pattern, i)):
            i, after_quantifier = m.end(), True
        else:
            i, after_quantifier = i + 1, False
    return None


class _Compiled:
    """One glibc ``regex_t``: compiled as given (no checks beyond glibc's), freed exactly once.

    glibc's regexec locks the pattern itself; the lock here also keeps ``close`` from freeing it
    under a thread that is still matching."""

    def __init__(self, pattern: str):
        self._lib = _libc()  # kept: __del__ may run when the module globals are gone
        self._buf = (ctypes.c_uint64 * _REGEX_T_WORDS)()
        self._lock = threading.Lock()
        self._live = False
        self.pattern = pattern
        rc = self._lib.regcomp(self._buf, pattern.encode("utf-8", "surrogateescape"), _FLAGS)
        if rc != 0:
            text = ctypes.create_string_buffer(512)
            self._lib.regerror(rc, self._buf, text, len(text))
            # glibc frees what regcomp allocated when it fails; regfree here would free twice.
            raise _error(pattern, text.value.decode("utf-8", "replace") or f"regcomp error {rc}")
        self._live = True

    def search(self, text: str) -> bool:
        data = text.encode("utf-8", "surrogateescape")
        with self._lock:
            if not self._live:
                raise ValueError(f"kernel regex is closed: {self.pattern!r}")
            return self._lib.regexec(self._buf, data, 0, None, 0) == 0

    def close(self) -> None:
        with self._lock:
            if self._live:
                self._live = False
                self._lib.regfree(self._buf)

    def __del__(self):
        if getattr(self, "_live", False):
            self.close()


class Regex:
    """A validated kernel-name regex. ``search`` is true when the pattern matches anywhere in the
    name (as regexec does); results are remembered per distinct name."""

    def __init__(self, pattern: str, compiled: _Compiled):
        self.pattern = pattern
        self._compiled = compiled
        self._cache: dict[str, bool] = {}

    def search(self, text: str) -> bool:
        hit = self._cache.get(text)
        if hit is None:
            hit = self._compiled.search(text)
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[text] = hit
        return hit

    def mask(self, names):
        """Matches of a pandas Series (-> boolean Series, same index) or of an iterable of names
        (-> list of bool). Missing names (None, NaN, NA) are matched as the empty string."""
        if hasattr(names, "index") and hasattr(names, "fillna"):
            import numpy as np
            import pandas as pd

            codes, uniques = pd.factorize(names.fillna("").astype(str))
            hits = np.fromiter((self.search(u) for u in uniques), dtype=bool, count=len(uniques))
            return pd.Series(hits[codes] if len(codes) else np.zeros(0, bool), index=names.index,
                             dtype=bool)
        return [self.search("" if _missing(n) else str(n)) for n in names]

    def cache_size(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        self._compiled.close()
        self._cache.clear()  # a closed regex answers nothing, not even from memory

    def __repr__(self) -> str:
        return f"rocpd.regex.compile({self.pattern!r})"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


def compile(pattern: str) -> Regex:  # noqa: A001 - the name the launcher and filters call
    """Compile a kernel-name regex as the capture does, or raise ValueError with one line:
    ``invalid kernel regex 'X': <why> (POSIX extended syntax: ...)``."""
    if not isinstance(pattern, str):
        raise TypeError(f"kernel regex must be a str, not {type(pattern).__name__}")
    why = unsupported(pattern)
    if why is not None:
        raise _error(pattern, why)
    return Regex(pattern, _Compiled(pattern))
