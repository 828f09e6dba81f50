"""Bounded runs (`rocprof run --max-size SIZE --keep POLICY`, docs/long-runs.md): the two
options' checks and their typed settings. What is kept is decided by the writer
(cpp/storage/step_keeper.hpp); this module only reads the command line."""

from __future__ import annotations

# Parsed by hand: the launcher loads no regular expressions before the program
# (tests/integration/test_startup_imports.py).
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}
# The smallest budget worth recording into: the schema, a WAL and a few steps' rows.
MIN_SIZE = 256 * 1000


def parse_size(text: str) -> int:
    """Bytes of `5MB`, `20GB`, `512MiB`, `1000000` (k, M, G, T: powers of 1000; Ki, Mi, Gi,
    Ti: of 1024; the B optional). ValueError in one line otherwise."""
    s = text.strip()
    digits = len(s) - len(s.lstrip("0123456789"))
    unit = s[digits:].strip()
    unit = unit[:-1] if unit[-1:] in ("b", "B") else unit
    binary = unit[-1:] == "i"
    unit = unit[:-1] if binary else unit
    if not 0 < digits <= 15 or unit.lower() not in _POWERS or (binary and not unit):
        raise ValueError(f"--max-size {text!r}: expected a size like 5MB, 20GB or 512MiB")
    n = int(s[:digits]) * (1024 if binary else 1000) ** _POWERS[unit.lower()]
    if n < MIN_SIZE:
        raise ValueError(f"--max-size {text!r}: at least {MIN_SIZE // 1000}kB (the schema and "
                         "a few steps)")
    return n


def check_keep(text: str) -> str:
    """`auto`, `slowest:N` or `every:K`; ValueError in one line otherwise."""
    mode, colon, num = text.partition(":")
    if text == "auto" or (mode in ("slowest", "every") and colon and num.isdigit()
                          and num[0] != "0" and len(num) <= 6):
        return text
    raise ValueError(f"--keep {text!r}: expected auto, slowest:N or every:K (N, K from 1)")


def configure(options, settings) -> None:
    """The session's settings.bounded from --max-size (bytes) and --keep."""
    settings.bounded.max_size = str(options.max_size or "")
    settings.bounded.keep = options.keep
