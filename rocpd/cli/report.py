"""rocpd report DB... -o report.html: one self-contained HTML file (tables and inlined plots)."""

from __future__ import annotations

from . import add_filter_options, filters_of


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="self-contained HTML report: summary tables and plots")
    p.add_argument("databases", nargs="+", help="files, globs or directories")
    p.add_argument("-o", "--output", required=True, help="HTML file to write")
    p.add_argument("--top", type=int, default=20, help="rows per summary table (default 20)")
    p.add_argument("--units", default="us", choices=["ns", "us", "ms", "s"])
    p.add_argument("--title", default="rocpd report")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import rocpd
    from rocpd import report

    with rocpd.connect(*args.databases) as db:
        path = report.write(db, args.output, top=args.top, units=args.units, title=args.title,
                            **filters_of(args))
    print(f"wrote {path}")
    return 0
