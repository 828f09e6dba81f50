"""Bounded runs (`rocprof run --max-size SIZE --keep POLICY`, docs/long-runs.md): the two
options' checks and their typed settings. What is kept is decided by the writer
(cpp/storage/step_keeper.hpp); this module only reads the command line."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^(\d{1,15})\s*([kKmMgGtT]?)(i?)[bB]?$")
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}
KEEP = re.compile(r"^(auto|slowest:[1-9]\d{0,5}|every:[1-9]\d{0,5})$")
# The smallest budget worth recording into: the schema, a WAL and a few steps' rows.
MIN_SIZE = 256 * 1000


def parse_size(text: str) -> int:
    """Bytes of `5MB`, `20GB`, `512MiB`, `1000000` (k, M, G, T: powers of 1000; Ki, Mi, Gi,
    Ti: of 1024; the B optional). ValueError in one line otherwise."""
    m = _SIZE.match(text.strip())
    if not m or (m.group(3) and not m.group(2)):
        raise ValueError(f"--max-size {text!r}: expected a size like 5MB, 20GB or 512MiB")
    n = int(m.group(1)) * (1024 if m.group(3) else 1000) ** _POWERS[m.group(2).lower()]
    if n < MIN_SIZE:
        raise ValueError(f"--max-size {text!r}: at least {MIN_SIZE // 1000}kB (the schema and "
                         "a few steps)")
    return n


def check_keep(text: str) -> str:
    """`auto`, `slowest:N` or `every:K`; ValueError in one line otherwise."""
    if not KEEP.match(text):
        raise ValueError(f"--keep {text!r}: expected auto, slowest:N or every:K (N, K from 1)")
    return text


def configure(options, settings) -> None:
    """The session's settings.bounded from --max-size (bytes) and --keep."""
    settings.bounded.max_size = str(options.max_size or "")
    settings.bounded.keep = options.keep
