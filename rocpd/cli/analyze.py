"""rocpd analyze DB... [--section ...]: where the GPU's time goes and why (temporal and idle
breakdown, kernel launch statistics, overlap, Python lines, ROCTx ranges) and the findings."""

from __future__ import annotations

from . import add_filter_options, add_inputs, filters_of, inputs_of
from .written import wrote

_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _sections():
    from rocpd.analysis import SECTIONS

    return [name for name, _, _ in SECTIONS]


def add_parser(sub) -> None:
    p = sub.add_parser("analyze", help="guided analysis: breakdowns per step and rank, and findings")
    add_inputs(p)
    p.add_argument("--section", action="append", dest="sections", choices=_sections(),
                   metavar="SECTION", help=f"only this part (repeatable): {', '.join(_sections())}")
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--step", metavar="RANGE",
                       help="the ROCTx range that marks one step (its message, or the message "
                            "without a trailing number); default: detected")
    steps.add_argument("--no-steps", action="store_true", help="analyse the whole run as one")
    p.add_argument("--top", type=int, default=15, help="rows per table (default 15; 0: all)")
    p.add_argument("--units", default="us", choices=list(_UNITS), help="time unit of the tables")
    p.add_argument("--format", default="text", choices=["text", "csv", "json"],
                   help="text (default) on standard output; csv/json: one file per table under -o")
    p.add_argument("-o", "--output", metavar="PREFIX",
                   help="csv/json: write PREFIX_<section>.csv|json (and PREFIX_findings.*)")
    add_filter_options(p)
    p.set_defaults(run=run)


def scaled(df, units: str):
    """``*Ns`` columns in ``units`` (renamed), as the tables are shown."""
    div = _UNITS[units]
    if div == 1:
        return df
    out = df.copy()
    ren = {}
    for c in out.columns:
        if isinstance(c, str) and c.endswith("Ns"):
            out[c] = out[c].astype(float) / div
            ren[c] = c[:-2] + units.capitalize()
    return out.rename(columns=ren)


def findings_frame(findings):
    import pandas as pd

    return pd.DataFrame([{"rank": i + 1, "severity": f.severity, "rule": f.rule, "title": f.title,
                          "evidence": " | ".join(f.evidence), "suggestion": f.suggestion,
                          "score": round(f.score, 4), "sites": " ".join(f.sites)}
                         for i, f in enumerate(findings)],
                        columns=["rank", "severity", "rule", "title", "evidence", "suggestion",
                                 "score", "sites"])


def run(args) -> int:
    import pandas as pd

    import rocpd
    from rocpd.analysis import SECTIONS, analyze
    from rocpd.errors import RocpdError

    if args.format != "text" and not args.output:
        raise RocpdError(f"rocpd analyze --format {args.format} needs -o PREFIX (files PREFIX_<section>"
                         f".{args.format})")
    wanted = args.sections or _sections()
    step = "" if args.no_steps else args.step
    top = args.top or None
    with rocpd.connect(*inputs_of(args)) as db:
        a = analyze(db, step=step, **filters_of(args))
        if args.format == "text":
            print(_header(db, a))
        for name, attr, title in SECTIONS:
            if name not in wanted:
                continue
            if name == "findings":
                fs = a.findings()
                if args.format == "text":
                    print(f"\n== {title.upper()} ==")
                    print("\n".join(f"{i + 1}. {f.text()}" for i, f in enumerate(fs)) or "(none)")
                else:
                    _write(findings_frame(fs), args, name)
                continue
            df = getattr(a, attr)
            if args.format == "text":
                shown = scaled(df.head(top) if top else df, args.units)
                more = f" (top {top} of {len(df)})" if top and len(df) > top else ""
                print(f"\n== {title.upper()}{more} ==")
                with pd.option_context("display.width", 250, "display.max_columns", 40,
                                       "display.float_format", "{:.3f}".format,
                                       "display.max_colwidth", 70):
                    print(shown.to_string(index=False) if len(shown) else "(no rows)")
            else:
                _write(df, args, name)
    return 0


def _header(db, a) -> str:
    procs = a.processes
    ranks = sorted({p.rank for p in procs if p.rank is not None})
    steps = {"given": f"'{a.step_name}' (given)", "detected": f"'{a.step_name}' (detected)",
             "none": "none found (the whole run is analysed)",
             "off": "off (the whole run is analysed)"}[a.step_source]
    lines = [f"rocpd analyze: {len(db.sources())} database(s), {len(procs)} process(es)"
             + (f", ranks {', '.join(map(str, ranks))}" if ranks else ""),
             f"step range: {steps}"]
    if a.dropped:
        lines.append(f"WARNING: {a.dropped} records were dropped while profiling; figures undercount")
    return "\n".join(lines)


def _write(df, args, name) -> None:
    path = f"{args.output}_{name.replace('-', '_')}.{args.format}"
    if args.format == "csv":
        df.to_csv(path, index=False)
    else:
        df.to_json(path, orient="records", indent=1)
    wrote(path)
