"""rocpd summary DB...: rocprofv3-style statistics per domain, with dropped-record counts."""

from __future__ import annotations

from . import add_filter_options, filters_of


def add_parser(sub) -> None:
    p = sub.add_parser("summary", help="per-domain statistics (kernels, copies, APIs, ROCTx)")
    p.add_argument("databases", nargs="+", help="files, globs or directories")
    p.add_argument("--top", type=int, help="show only the N longest entries per table")
    p.add_argument("--units", default="ns", choices=["ns", "us", "ms", "s"])
    p.add_argument("--by", choices=["pid", "rank", "host"], help="one table per process/rank/host")
    p.add_argument("--domain", action="append", dest="domains",
                   help="only this table (kernel, memory_copy, marker_api, hip_api, domain, ...)")
    p.add_argument("--busy", action="store_true", help="also print GPU busy percent per agent")
    p.add_argument("--csv", metavar="PREFIX", help="also write PREFIX_<domain>_stats.csv files")
    p.add_argument("--strict", action="store_true",
                   help="fail on an unreadable database instead of skipping it with a warning")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import rocpd
    from rocpd import stats
    from rocpd.summary import cached

    flt = filters_of(args)
    with rocpd.connect(*args.databases, strict=args.strict) as db, cached():
        print(stats.format_summary(db, top=args.top, units=args.units, by=args.by,
                                   domains=args.domains, **flt), end="")
        if args.busy:
            busy = db.busy(**flt)
            cols = ["pid", "agent_id", "agent_abs_index", "type", "GpuTime", "WallTime", "BusyPercent"]
            print("\n== GPU BUSY ==\n" + (busy[cols].to_string(index=False) if len(busy) else "(no GPU records)"))
        if args.csv:
            for path in stats.write_stats_csv(db, args.csv, **flt):
                print(f"wrote {path}")
    return 0
