"""rocpd compare A B: kernel and range time/call deltas, new and missing names, overall speed-up."""

from __future__ import annotations

from ..summary.stats import clip_frame
from ..textfmt import more_rows
from . import add_command, add_filter_options, add_top, filters_of, top_of

EXAMPLES = """
rocpd compare OUT/run1_results.db OUT/timeit_results.db
rocpd compare before/ after/ --top 10 --include 'gemm|conv'
"""


def add_parser(sub) -> None:
    p = add_command(sub, "compare", "compare two runs (A = baseline, B = new): whole-run totals",
                    EXAMPLES, description="compare two runs (A = baseline, B = new): kernel and "
                    "ROCTx-range totals over the whole run, new and missing names, overall "
                    "speed-up. Per step, per line, with confidence intervals: rocpd diff A B")
    p.add_argument("a", help="baseline database (or directory/glob quoted)")
    p.add_argument("b", help="new database")
    add_top(p)
    add_filter_options(p)
    p.set_defaults(run=run)


def speedup(a_ns: int, b_ns: int, ratio) -> str:
    """"speed-up 1.234x", or why there is none (never a NaN)."""
    if ratio is not None:
        return f"speed-up {ratio:.3f}x"
    if not a_ns and not b_ns:
        return "speed-up n/a (neither run has any)"
    return f"speed-up n/a ({'A' if not a_ns else 'B'} has none)"


def run(args) -> int:
    import pandas as pd

    from rocpd.diff.compare import compare

    top = top_of(args)
    res = compare(args.a, args.b, **filters_of(args))
    s = res["summary"]
    print(f"kernel time: A {s['kernel_time_a_ns']} ns, B {s['kernel_time_b_ns']} ns, "
          + speedup(s["kernel_time_a_ns"], s["kernel_time_b_ns"], s["kernel_speedup"]))
    print(f"wall time:   A {s['wall_time_a_ns']} ns, B {s['wall_time_b_ns']} ns, "
          + speedup(s["wall_time_a_ns"], s["wall_time_b_ns"], s["wall_speedup"]))
    with pd.option_context("display.width", 250, "display.max_colwidth", 80,
                           "display.float_format", "{:.3f}".format):
        for key in ("kernels", "regions"):
            df = res[key]
            print(f"\n== {key.upper()} (by impact) ==")
            # Ratio is B/A; a name new in B has none ("-").
            shown = df if top is None else df.head(top)
            print(clip_frame(shown).to_string(index=False, na_rep="-") if len(df) else "(none)")
            if len(shown) < len(df):
                print(more_rows(len(df) - len(shown)))
    return 0
