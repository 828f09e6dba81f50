"""rocpd compare A B: kernel and range time/call deltas, new and missing names, overall speed-up."""

from __future__ import annotations

from . import add_filter_options, filters_of


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="compare two runs (A = baseline, B = new)")
    p.add_argument("a", help="baseline database (or directory/glob quoted)")
    p.add_argument("b", help="new database")
    p.add_argument("--top", type=int, default=20)
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import pandas as pd

    from rocpd.compare import compare
    from rocpd.stats import clip_frame

    res = compare(args.a, args.b, **filters_of(args))
    s = res["summary"]
    print(f"kernel time: A {s['kernel_time_a_ns']} ns, B {s['kernel_time_b_ns']} ns, "
          f"speed-up {s['kernel_speedup']:.3f}x")
    print(f"wall time:   A {s['wall_time_a_ns']} ns, B {s['wall_time_b_ns']} ns, "
          f"speed-up {s['wall_speedup']:.3f}x")
    with pd.option_context("display.width", 250, "display.max_colwidth", 80,
                           "display.float_format", "{:.3f}".format):
        for key in ("kernels", "regions"):
            df = res[key]
            print(f"\n== {key.upper()} (by impact, top {args.top} of {len(df)}) ==")
            print(clip_frame(df.head(args.top)).to_string(index=False) if len(df) else "(none)")
    return 0
