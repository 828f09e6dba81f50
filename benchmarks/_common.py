"""Shared by the CPU benchmarks: repeats, medians with spread, and RESULTS.md rows."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"


def summary(values: list[float]) -> str:
    med = statistics.median(values)
    return f"{med:.1f} (min {min(values):.1f}, max {max(values):.1f}, n={len(values)})"


def machine() -> str:
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        gpu = []
    cpu = platform.processor() or platform.machine()
    return f"{os.cpu_count()}-core {cpu}" + (f", {gpu[0]}" if gpu else ", no GPU")


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=ROOT, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def append_row(section: str, row: str) -> None:
    """With --record on the command line: append a dated row under `## section` in
    RESULTS.md (created when missing). Without it the figures are only printed."""
    import sys

    if "--record" not in sys.argv:
        return
    today = _dt.date.today().isoformat()
    line = f"| {today} | {machine()} | {commit()} | {row} |\n"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    head = f"## {section}"
    if head not in text:
        text += f"\n{head}\n\n| date | machine | commit | figures |\n|---|---|---|---|\n"
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith(head))
    end = start + 1
    while end < len(lines) and not lines[end].startswith("## "):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, line)
    RESULTS.write_text("".join(lines))
    if os.environ.get("OUT"):  # on the device machine, hand the row back too
        Path(os.environ["OUT"], "RESULTS-rows.md").open("a").write(f"{section}: {line}")
