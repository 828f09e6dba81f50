"""Rule: the hottest sampled lines of a run without GPU work (a GPU run names the lines that
launch its GPU time instead: gpu.top_code). A line is the innermost Python frame of a
call-stack sample: what the thread was running."""

from __future__ import annotations

from ..cpu import has_gpu_work, program_lines
from ..findings import Finding
from ..sites import short_site

SHOWN = 3


def hot_lines(a) -> list[Finding]:
    if has_gpu_work(a):
        return []
    lines = program_lines(a.hot_lines)
    if lines.empty:
        return []
    top = lines.head(SHOWN)
    n = sum(len(p.samples) for p in a.processes if p.samples is not None)
    title = "hottest sampled lines: " + ", ".join(
        f"{short_site(s)} ({p:.0f} %)" for s, p in zip(top["Site"], top["Percent"], strict=True))
    ev = [f"{r.Site} in {r.Function}: {r.Samples} of {n} samples ({r.Percent:.1f} %)"
          for r in top.itertuples()]
    sugg = ("start optimising at these lines: the sampled threads spent their time there (the "
            "flame graph shows the calls above them: rocpd samples DB --flamegraph f.svg)")
    return [Finding("hot-lines", title, sugg, float(top["Percent"].iloc[0]) / 100.0, ev,
                    list(top["Site"]), level="info")]


RULES = (hot_lines,)
