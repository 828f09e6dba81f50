"""rocpd query DB... --sql "...": read-only SQL over the rocpd views of every database."""

from __future__ import annotations

import csv
import io
import json
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("query", help="run read-only SQL (plain rocpd_* and human-readable views)")
    p.add_argument("databases", nargs="+")
    p.add_argument("--sql", required=True, help="one SELECT statement")
    p.add_argument("--format", default="console", choices=["console", "csv", "json", "markdown"],
                   help="console and markdown clip long values; csv and json keep them whole")
    p.add_argument("-o", "--output", help="write here instead of stdout")
    p.set_defaults(run=run)


def render(cols, rows, fmt: str) -> str:
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=1) + "\n"
    from rocpd.stats import clip_name

    # Tables for reading are clipped (see rocpd.stats.NAME_WIDTH): one huge value would otherwise
    # pad every row of the console table to its length.
    cols = [clip_name(c) for c in cols]
    text = [[("" if v is None else clip_name(str(v))) for v in r] for r in rows]
    if fmt == "markdown":
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(map(esc, cols)) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(map(esc, r)) + " |" for r in text]
        return "\n".join(lines) + "\n"
    widths = [max([len(c), *(len(r[i]) for r in text)]) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(lines) + f"\n({len(rows)} rows)\n"


def run(args) -> int:
    import rocpd

    with rocpd.connect(*args.databases) as db:
        cur = db.execute(args.sql)
        cols = [d[0] for d in cur.description or []]
        out = render(cols, cur.fetchall(), args.format)
    if args.output:
        with open(args.output, "w", newline="") as fh:
            fh.write(out)
    else:
        sys.stdout.write(out)
    return 0
