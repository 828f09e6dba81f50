"""rocpd query DB... --sql "...": read-only SQL over the rocpd views of every database.

ROCm's form also works: ``rocpd query -i a.db --query "SELECT ..." --format csv [-d PATH -o NAME]
[--script views.sql] [--start 25% --end 75%]`` prints to the console or writes PATH/NAME.<ext>
(default rocpd-output-data/out.csv; CSV headers title-cased as ROCm writes them)."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import sys

from . import (
    add_inputs,
    add_output_naming,
    add_time_window_options,
    inputs_of,
    output_naming,
)
from .written import wrote

FORMATS = ["console", "csv", "json", "markdown", "md", "html"]


def add_parser(sub) -> None:
    p = sub.add_parser("query", help="run read-only SQL (plain rocpd_* and human-readable views)")
    add_inputs(p)
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--sql", help="one SELECT statement")
    q.add_argument("--query", help="the same, in ROCm's form (files named ROCm's way)")
    p.add_argument("--script", metavar="FILE",
                   help="SQL run before the query, e.g. CREATE TEMP VIEW statements")
    p.add_argument("-f", "--format", default="console", type=str.lower, choices=FORMATS,
                   help="console and markdown clip long values; csv, json and html keep them whole")
    add_output_naming(p, "ours (positional databases): write here instead of stdout; ROCm's form:"
                      " base name of the file (default out)")
    add_time_window_options(p)
    p.set_defaults(run=run)


def _titled(cols):
    return [str(c).title() for c in cols]


def render(cols, rows, fmt: str) -> str:
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "json":
        return json.dumps([dict(zip(cols, r, strict=True)) for r in rows], indent=1) + "\n"
    if fmt == "html":
        cell = lambda v: html.escape("" if v is None else str(v))  # noqa: E731
        lines = ['<table border="1" class="dataframe">', "<thead><tr>"]
        lines += [f"<th>{cell(c)}</th>" for c in cols] + ["</tr></thead>", "<tbody>"]
        lines += ["<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>" for r in rows]
        return "\n".join(lines + ["</tbody>", "</table>"]) + "\n"
    if fmt == "md":
        fmt = "markdown"
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
    from rocpd import time_window

    window = {k: getattr(args, k) for k in ("start", "end", "start_marker", "end_marker")}
    with rocpd.connect(*inputs_of(args)) as db:
        time_window.apply_time_window(db, **window, inclusive=args.inclusive is not False)
        if args.script:
            from rocpd import readonly

            conn = db.conn
            with open(args.script) as fh:
                readonly.run_view_script(conn, db._guard, fh.read())
        cur = db.execute(args.sql or args.query)
        cols = [d[0] for d in cur.description or []]
        rows = cur.fetchall()
    # ROCm's form: -i, -d or --query; positional databases with --sql keep ours (stdout or -o).
    rocm = bool(args.input or args.output_path or args.query)
    if (rocm and args.format == "console") or (not rocm and not args.output_file):
        sys.stdout.write(render(cols, rows, args.format))
        return 0
    if rocm:
        folder, name = output_naming(args)
        ext = {"markdown": "md"}.get(args.format, args.format)
        path = os.path.join(folder, name if name.endswith(f".{ext}") else f"{name}.{ext}")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        out = render(_titled(cols) if args.format == "csv" else cols, rows, args.format)
    else:
        path, out = args.output_file, render(cols, rows, args.format)
    if not rows and rocm:
        print(f"rocpd: the query returned no rows; nothing written to {os.path.abspath(path)}", file=sys.stderr)
        return 0
    with open(path, "w", newline="") as fh:
        fh.write(out)
    wrote(path)
    return 0
