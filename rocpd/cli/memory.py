"""rocpd memory DB... [--view ...]: GPU memory by Python line (rocpd.memory): the peak and what
was live there, the lines that leak step over step, fragmentation at the peak and the
out-of-memory post-mortem, from `rocprof run --memory-allocation-trace`."""

from __future__ import annotations

import rocpd

from ..io.output_file import open_output
from ..memory import VIEWS, analyze
from ..memory.text import header, human, oom_text
from ..textfmt import more_rows
from . import (
    add_command,
    add_filter_options,
    add_inputs,
    add_step_options,
    add_top,
    filters_of,
    inputs_of,
    step_of,
    top_of,
)
from .analyze import text_table
from .written import wrote

EXAMPLES = """
rocpd memory OUT/host/123_results.db                  # peak by line, leaks, fragmentation, OOM
rocpd memory OUT/ --view leaks                        # lines whose live bytes grow per step
rocpd memory OUT/ --view steps --all                  # allocated/reserved per step
rocpd memory OUT/ --flame peak.svg --folded peak.folded   # live bytes at the peak by stack
"""
SHOWN = ("peak", "leaks", "fragmentation", "oom")
TITLES = {"peak": "LIVE AT THE PEAK, BY LINE", "leaks": "LEAKS: LINES GROWING STEP OVER STEP",
          "fragmentation": "FRAGMENTATION AT THE PEAK", "oom": "OUT OF MEMORY",
          "oom_live": "LIVE AT THE OUT-OF-MEMORY, BY LINE", "steps": "PER STEP",
          "timeline": "TIMELINE (maximum of each slice)", "summary": "PER DEVICE"}


def add_parser(sub) -> None:
    p = add_command(sub, "memory", "GPU memory by Python line: peak, leaks, fragmentation, "
                    "out of memory (rocprof run --memory-allocation-trace)", EXAMPLES)
    add_inputs(p)
    p.add_argument("--view", choices=("all", *VIEWS), default="all",
                   help="one table; all: the peak, leaks, fragmentation and any out-of-memory")
    add_step_options(p)
    p.add_argument("--points", type=int, default=200, metavar="N",
                   help="slices of the timeline (each shows its maximum)")
    p.add_argument("--csv", metavar="FILE", help="also write the --view table as CSV")
    p.add_argument("--flame", metavar="FILE.svg",
                   help="write a flame graph of the live bytes at each GPU's peak by call stack")
    p.add_argument("--folded", metavar="FILE",
                   help="write the same as folded stacks (flamegraph.pl, speedscope)")
    add_top(p)
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    top = top_of(args)
    with rocpd.connect(*inputs_of(args)) as db:
        m = analyze(db, step=step_of(args), points=max(1, args.points),
                    **filters_of(args))
    print(header(m))
    for note in m.notes:
        print(f"note: {note}")
    views = SHOWN if args.view == "all" else (args.view,)
    for v in views:
        df = getattr(m, v)
        if v == "oom" and args.view == "all":
            if len(df):
                print(f"\n== {TITLES[v]} ==\n{oom_text(m)}")
            continue
        print(f"\n== {TITLES[v]} ==")
        print(_table(human(df), top) if len(df) else _empty(v, m))
        for rule in df.attrs.get("rules", []):
            print(f"note: {rule}")
    if args.csv:
        df = getattr(m, "peak" if args.view == "all" else args.view)
        with open_output(args.csv, newline="") as fh:
            df.to_csv(fh, index=False)
        wrote(args.csv)
    if args.folded:
        with open_output(args.folded, encoding="utf-8") as fh:
            for stack, b in sorted(m.folded.items()):
                fh.write(f"{stack} {b}\n")
        wrote(args.folded)
    if args.flame:
        from ..export.flamegraph import render

        with open_output(args.flame, encoding="utf-8") as fh:
            fh.write(render(m.folded or {"(nothing live)": 1}, title="GPU memory live at the peak",
                            unit="bytes"))
        wrote(args.flame)
    return 0


def _table(df, top) -> str:
    shown = df.head(top) if top else df
    out = text_table(shown)
    if top and len(df) > top:
        out += "\n" + more_rows(len(df) - top)
    return out


def _empty(view, m) -> str:
    if view == "leaks":
        n = len(m.steps["step"].unique()) if len(m.steps) else 0
        return (f"no line grows step over step ({n} steps, step range '{m.step_name}')"
                if m.step_name else "no steps: leaks are found step over step (mark steps with"
                " roctx.range('step') or give --step)")
    if view in ("oom", "oom_live"):
        return "no out-of-memory recorded"
    if view in ("peak", "fragmentation") and not m.has_lines:
        return "no allocator events: only the driver's allocations were recorded"
    return "(no rows)"
