"""rocpd samples DB...: top functions of call-stack samples (self or total), optionally inside a
ROCTx range or a time window; --collapsed / --flamegraph write the stacks as well."""

from __future__ import annotations

import argparse

import rocpd

from ..errors import RocpdError
from ..summary import samples
from ..textfmt import TOP_ROWS, more_rows
from . import add_command
from .written import wrote

EXAMPLES = """
rocpd samples OUT/sampled_results.db
rocpd samples OUT/sampled_results.db --by total --lines --top 30
rocpd samples OUT/sampled_results.db --range train --flamegraph train.svg
"""


def add_parser(sub) -> None:
    p = add_command(sub, "samples", "top functions from call-stack samples; flame graph", EXAMPLES)
    p.add_argument("databases", nargs="+", help="files, globs or directories")
    p.add_argument("--by", choices=("self", "total"), default="self",
                   help="rank functions by the samples they were running in (self) or on the"
                        " stack of (total)")
    p.add_argument("-n", "--top", dest="limit", type=int, default=TOP_ROWS, metavar="N",
                   help="functions shown")
    p.add_argument("--limit", dest="limit", type=int, help=argparse.SUPPRESS)
    p.add_argument("--all", action="store_true", help="every function (or line)")
    p.add_argument("--lines", action="store_true", help="per source line, not per function")
    p.add_argument("--range", dest="roctx_range", metavar="NAME", help="only inside ROCTx range NAME")
    p.add_argument("--window", nargs=2, type=int, metavar=("T0", "T1"),
                   help="only samples in [T0, T1), ns from the start of the run")
    p.add_argument("--tid", type=int, help="only this thread's samples")
    p.add_argument("--pid", type=int, help="only this process's samples")
    p.add_argument("--collapsed", metavar="FILE", help="also write collapsed stacks")
    p.add_argument("--flamegraph", metavar="SVG", help="also write a flame graph")
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd.export import collapsed, flamegraph

    filters = {k: getattr(args, k) for k in ("roctx_range", "window", "tid", "pid")
               if getattr(args, k) is not None}
    with rocpd.connect(*args.databases) as db:
        info = samples.sampling_info(db)
        if not info and not samples.sample_count(db):
            raise RocpdError("no call-stack samples in these databases (record them with "
                             "`rocprof run --sample ...`)")
        top = None if args.all else args.limit
        rows = samples.top_functions(db, by=args.by, limit=None, lines=args.lines, **filters)
        n = samples.sample_count(db, **filters)
        # The thread method's stacks are read while they change: say so where it was used.
        method = ", read by a thread" if info.get("method") == "thread" else ""
        print(f"{n} samples (rate {info.get('hz', '?')} Hz, mode {info.get('mode', '?')}{method}, "
              f"missed {info.get('samples_missed', '?')})")
        print(f"{'self%':>7} {'total%':>7} {'self':>7} {'total':>7}  function")
        for r in rows[:top]:
            where = f"{r['file']}:{r['line']}" if args.lines else r["file"]
            print(f"{r['self_pct']:7.2f} {r['total_pct']:7.2f} {r['self']:7d} {r['total']:7d}  "
                  f"{r['function']} ({where})")
        if top is not None and len(rows) > top:
            print(more_rows(len(rows) - top))
        for mod, path in ((collapsed, args.collapsed), (flamegraph, args.flamegraph)):
            if path:
                wrote(mod.write(db, path, lines=args.lines, **filters))
    return 0
