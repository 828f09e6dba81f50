"""rocpd query DB... --sql "...": read-only SQL over the rocpd views of every database.

ROCm's form also works: ``rocpd query -i a.db --query "SELECT ..." --format csv [-d PATH -o NAME]
[--script views.sql] [--start 25% --end 75%]`` prints to the console or writes PATH/NAME.<ext>
(default rocpd-output-data/out.csv; CSV as ROCm's writes it, pandas' ``to_csv``).

ROCm's other query options: ``--format pdf`` (rocpd.report.table_files), ``dashboard`` (an HTML page
styled as our report, or the Jinja2 ``--template-path``), ``clipboard``, ``--kernel-rename`` and
mailing the written file (``--email-to`` ..., rocpd.cli.email_report)."""

from __future__ import annotations

import os
import sys

import rocpd

from ..errors import RocpdError
from ..io import readonly, time_window
from ..io.output_file import open_output
from ..textfmt import render
from . import (
    add_command,
    add_inputs,
    add_kernel_rename,
    add_output_naming,
    add_time_window_options,
    inputs_of,
    output_naming,
)
from .written import wrote

FORMATS = ["console", "csv", "json", "markdown", "md", "html", "pdf", "dashboard", "clipboard"]
_EXT = {"markdown": "md", "dashboard": "html"}
EXAMPLES = """
rocpd query OUT/run1_results.db --sql "SELECT name, duration FROM regions LIMIT 5" --format markdown
rocpd query -i db0.db db1.db --query "SELECT * FROM top_kernels LIMIT 10" --format csv
rocpd query -i db0.db --query "SELECT * FROM top_kernels" --format dashboard -o top
rocpd query -i db0.db --query "SELECT * FROM top" --format html --email-to a@b.org --email-from me@b.org
"""


def add_parser(sub) -> None:
    p = add_command(sub, "query", "run read-only SQL (plain rocpd_* and human-readable views)",
                    EXAMPLES)
    add_inputs(p)
    q = p.add_mutually_exclusive_group(required=True)
    q.add_argument("--query", help="one SELECT statement; with -i/-d (ROCm's form) the output is"
                                   " a file named ROCm's way")
    q.add_argument("--sql", help="the same; with positional databases the output goes to stdout,"
                                 " or to -o")
    p.add_argument("--script", metavar="FILE",
                   help="SQL run before the query, e.g. CREATE TEMP VIEW statements")
    p.add_argument("-f", "--format", default="console", type=str.lower, choices=FORMATS,
                   help="console and markdown clip long values; csv, json, html, pdf and dashboard"
                        " (an HTML page styled as `rocpd report`) keep them whole; clipboard: the"
                        " console table, copied")
    add_output_naming(p, "ours (positional databases): write here instead of stdout; ROCm's form:"
                      " base name of the file (default out)")
    add_kernel_rename(p)
    p.add_argument("--template-path", metavar="FILE",
                   help="--format dashboard: render this Jinja2 template (variables title,"
                        " timestamp, table_html, query, databases) instead of our page")
    g = p.add_argument_group("mail the written file (ROCm's options)")
    g.add_argument("--email-to", metavar="ADDRS", help="recipients, comma-separated")
    g.add_argument("--email-from", metavar="ADDR", help="sender (needed with --email-to)")
    g.add_argument("--email-subject", default="rocpd query report", help="subject line")
    g.add_argument("--smtp-server", default="localhost", metavar="HOST", help="SMTP server")
    g.add_argument("--smtp-port", type=int, default=25, metavar="PORT",
                   help="SMTP port (465: TLS from the start; others: STARTTLS when offered)")
    g.add_argument("--smtp-user", metavar="USER", help="log in as USER (only over TLS)")
    g.add_argument("--smtp-password", metavar="PASSWORD",
                   help="USER's password; prefer $ROCPD_SMTP_PASSWORD, which other users cannot"
                        " see in the process list (never printed or stored)")
    g.add_argument("--zip-attachments", action="store_true", help="attach the file zipped")
    g.add_argument("--inline-preview", action="store_true",
                   help="an html/dashboard file is also the message's body")
    add_time_window_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    window = {k: getattr(args, k) for k in ("start", "end", "start_marker", "end_marker")}
    with rocpd.connect(*inputs_of(args)) as db:
        time_window.apply_time_window(db, **window, inclusive=args.inclusive)
        if args.kernel_rename:
            from rocpd.io.kernel_rename import rename_kernels

            rename_kernels(db)
        if args.script:
            conn = db.conn
            with open(args.script) as fh:
                readonly.run_view_script(conn, db._guard, fh.read())
        cur = db.execute(args.sql or args.query)
        cols = [d[0] for d in cur.description or []]
        rows = cur.fetchall()
    fmt = args.format
    if fmt == "clipboard":
        from rocpd.report.table_files import to_clipboard

        tool = to_clipboard(render(cols, rows, "console"))
        print(f"copied {len(rows)} rows to the clipboard ({tool})")
        return _no_mail(args, "the clipboard")
    # ROCm's form: -i, -d or --query; positional databases with --sql keep ours (stdout or -o).
    rocm = bool(args.input or args.output_path or args.query)
    if fmt in ("pdf", "dashboard") and not rocm and not args.output_file:
        raise RocpdError(f"rocpd query --format {fmt} writes a file: give -o FILE (or -d FOLDER)")
    if (rocm and fmt == "console") or (not rocm and not args.output_file):
        sys.stdout.write(render(cols, rows, fmt))
        return _no_mail(args, "standard output")
    if rocm:
        folder, name = output_naming(args)
        ext = _EXT.get(fmt, fmt)
        path = os.path.join(folder, name if name.endswith(f".{ext}") else f"{name}.{ext}")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    else:
        path = args.output_file
    if not rows and rocm:
        print(f"rocpd: the query returned no rows; nothing written to {os.path.abspath(path)}", file=sys.stderr)
        return _no_mail(args, "no file")
    _write(path, cols, rows, fmt, args)
    wrote(path)
    if args.email_to:
        from rocpd.cli import email_report

        to = email_report.recipients(args.email_to)
        email_report.send(path, to, args.email_from, args.email_subject, args.smtp_server,
                          args.smtp_port, args.smtp_user, args.smtp_password,
                          args.inline_preview, args.zip_attachments)
        print(f"mailed {os.path.abspath(path)} to {', '.join(to)}")
    return 0


def _write(path: str, cols, rows, fmt: str, args) -> None:
    if fmt == "pdf":
        from rocpd.report.table_files import write_pdf

        write_pdf(path, [(args.sql or args.query, cols, rows)])
        return
    if fmt == "dashboard":
        from rocpd.report.table_files import dashboard

        out = dashboard(cols, rows, args.sql or args.query, inputs_of(args), args.template_path)
    else:
        out = render(cols, rows, fmt)
    with open_output(path, newline="") as fh:
        fh.write(out)


def _no_mail(args, where: str) -> int:
    """--email-to sends the written file. With none written the query still succeeded: as
    ROCm's query, say that nothing is mailed and exit 0 (the sender is still required)."""
    if args.email_to:
        if not args.email_from:
            raise RocpdError("--email-to needs --email-from (the sender's address)")
        print("No file was exported; skipping email.")
        print(f"rocpd: note: the result went to {where}; --format csv, html, json, md, pdf or"
              " dashboard writes a file to mail", file=sys.stderr)
    return 0
