"""rocpd analyze DB... [--section ...]: where the GPU's time goes and why (temporal and idle
breakdown, kernel launch statistics, overlap, Python lines, ROCTx ranges) and the findings."""

from __future__ import annotations

import rocpd

from ..analysis import SECTIONS, analyze, bounded
from ..analysis.quiet import GPU_RUN, grouped
from ..analysis.steps import steps_of
from ..analysis.streamed import STREAM_ABOVE
from ..device_metrics import gpu_metrics
from ..errors import RocpdError
from ..io.output_file import open_output
from ..textfmt import clip_frame, more_rows, records_were, scaled
from . import (
    add_command,
    add_filter_options,
    add_inputs,
    add_step_options,
    add_top,
    add_units,
    filters_of,
    inputs_of,
    step_of,
    top_of,
)
from .written import wrote


def _sections():
    return [name for name, _, _ in SECTIONS]


EXAMPLES = """
rocpd analyze OUT/run1_results.db                # findings, then the breakdowns and tables
rocpd analyze OUT/run1_results.db --section per-step --section lines --units ms
rocpd analyze RANKS/ --step train_step --format csv -o analysis/run
"""


def add_parser(sub) -> None:
    p = add_command(sub, "analyze", "guided analysis: breakdowns per step and rank, and findings",
                    EXAMPLES)
    add_inputs(p)
    p.add_argument("--section", action="append", dest="sections", choices=_sections(),
                   metavar="SECTION", help=f"only this part (repeatable): {', '.join(_sections())}")
    add_step_options(p, "analyse the whole run as one")
    add_top(p)
    add_units(p, "us")
    p.add_argument("--format", default="text", choices=["text", "csv", "json"],
                   help="text on standard output; csv/json: one file per table under -o")
    p.add_argument("-o", "--output", metavar="PREFIX",
                   help="csv/json: write PREFIX_<section>.csv|json (and PREFIX_findings.*)")
    add_filter_options(p)
    p.set_defaults(run=run)


def run_start(a) -> int | None:
    """The first recorded activity (GPU op, ROCTx range or API call) of the analysed processes."""
    firsts = [p.gpu_span()[0] for p in a.processes if p.gpu_ops]
    firsts += [int(df["start"].min()) for p in a.processes for df in (p.ranges, p.api) if len(df)]
    return min(firsts) if firsts else None


def text_table(df) -> str:
    """A table as ``rocpd analyze`` prints it: long names clipped (rocpd.textfmt.clip_name), no rank
    or value recorded shown as "-"."""
    import pandas as pd

    df = clip_frame(df)
    if "rank" in df.columns:
        df = df.assign(rank=[("-" if pd.isna(r) else int(r)) for r in df["rank"]])
    with pd.option_context("display.width", 250, "display.max_columns", 40,
                           "display.float_format", "{:.3f}".format, "display.max_colwidth", 70):
        return df.to_string(index=False, na_rep="-")


def findings_frame(findings):
    import pandas as pd

    return pd.DataFrame([{"rank": i + 1, "severity": f.severity, "rule": f.rule, "title": f.title,
                          "evidence": " | ".join(f.evidence), "suggestion": f.suggestion,
                          "score": round(f.score, 4), "sites": " ".join(f.sites)}
                         for i, f in enumerate(findings)],
                        columns=["rank", "severity", "rule", "title", "evidence", "suggestion",
                                 "score", "sites"])


def run(args) -> int:
    if args.format != "text" and not args.output:
        raise RocpdError(f"rocpd analyze --format {args.format} needs -o PREFIX (files PREFIX_<section>"
                         f".{args.format})")
    wanted = args.sections or _sections()
    step = step_of(args)
    top = top_of(args)
    with rocpd.connect(*inputs_of(args)) as db:
        a = analyze(db, step=step, stream_above=STREAM_ABOVE, **filters_of(args))
        t0 = run_start(a)
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
            if a.omitted(name) == GPU_RUN:
                if args.sections and args.format == "text":  # asked for by name: say why not
                    print(f"\nnot shown: {name}: {GPU_RUN}")
                continue
            df = getattr(a, attr)
            if args.format == "text" and a.omitted(name):
                continue  # said in one line per reason below
            if args.format == "text":
                shown = scaled(df.head(top) if top else df, args.units, t0)
                print(f"\n== {title.upper()} ==")
                print(text_table(shown) if len(shown) else "(no rows)")
                if top and len(df) > top:
                    print(more_rows(len(df) - top))
            else:
                _write(df, args, name)
        if args.format == "text":
            for line in grouped(a, wanted):
                print(f"\n{line}")
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
    lines += _gpu_metrics_lines(a)
    lines += bounded.describe(db)
    lost = a.dropped - a.samples_missed  # missed samples: a finding of their own
    if lost:
        lines.append(f"WARNING: {records_were(lost)} dropped while profiling; figures undercount")
    return "\n".join(lines)


def _gpu_metrics_lines(a) -> list[str]:
    """One line per GPU with hardware metrics (--gpu-metrics): its figures over its steps."""
    if a.gpu_metrics is None:
        return []
    steps = {(p.guid, p.pid): steps_of(p, a.step_name) for p in a.processes} if a.step_name else {}
    what = f"per {a.step_name} step" if a.step_name else "over the run"
    return [f"GPU metrics {proc} GPU {gpu}, {what}: {r['headline']}"
            for (proc, gpu), r in gpu_metrics.run_headline(
                a.gpu_metrics.table(a.processes, "step", steps)).items()]


def _write(df, args, name) -> None:
    path = f"{args.output}_{name.replace('-', '_')}.{args.format}"
    with open_output(path, newline="") as fh:
        if args.format == "csv":
            df.to_csv(fh, index=False)
        else:
            df.to_json(fh, orient="records", indent=1)
    wrote(path)
