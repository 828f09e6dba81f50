"""Tables as PDF pages, the HTML dashboard, or the clipboard: the outputs ROCm's rocpd query (and
summary, for PDF) offers beyond text formats.

* PDF (matplotlib's PDF backend): each table as monospaced text, header and rule first, rows
  clipped at :data:`PDF_WIDTH` characters as ROCm's PDF does, as many pages as it takes.
* Dashboard: the result as a page styled as our HTML report (title, when it was made, the query
  and databases, the table); with a Jinja2 template (ROCm's ``--template-path``) the template is
  rendered instead, with ROCm's variables ``title``, ``timestamp`` and ``table_html`` and ours,
  ``query`` and ``databases``.
* Clipboard: the console table through the first clipboard tool found on PATH.
"""

from __future__ import annotations

import datetime
import html
import os
import shutil
import subprocess

from ..errors import RocpdError
from ..io.output_file import staged
from . import _CSS

PDF_WIDTH = 160
_LINES_PER_PAGE = 58
_CLIPBOARD_TOOLS = (("wl-copy",), ("xclip", "-selection", "clipboard"), ("xsel", "--clipboard", "--input"),
                    ("pbcopy",), ("clip.exe",))


def _text(v) -> str:
    return "" if v is None else str(v)


def write_pdf(path: str, tables) -> str:
    """``tables``: [(title, columns, rows)]; one PDF, tables one after another."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.backends.backend_pdf import PdfPages
        from matplotlib.figure import Figure
    except ImportError:
        raise RocpdError("--format pdf needs matplotlib (pip install 'rocprof[plots]')") from None
    lines: list[str] = []
    for title, cols, rows in tables:
        if lines:
            lines.append("")
        if title:
            lines.append(str(title))
        header = " | ".join(map(str, cols))
        lines += [header[:PDF_WIDTH], "-" * min(len(header), PDF_WIDTH)]
        lines += [" | ".join(_text(v) for v in r)[:PDF_WIDTH] for r in rows]
    with staged(path) as inner, PdfPages(inner) as pdf:
        for first in range(0, max(len(lines), 1), _LINES_PER_PAGE):
            fig = Figure(figsize=(11, 8.5))  # landscape letter: 160 columns of 6.5 pt Courier
            page = lines[first:first + _LINES_PER_PAGE]
            for i, line in enumerate(page):
                fig.text(0.03, 0.96 - i * (0.93 / _LINES_PER_PAGE), line, family="monospace",
                         fontsize=6.5, va="top")
            pdf.savefig(fig)
    return path


def dashboard(cols, rows, query: str, databases, template_path: str | None = None) -> str:
    """The HTML page of ``rocpd query --format dashboard``."""
    table = ['<table class="dashboard-table"><thead><tr>']
    table += [f"<th>{html.escape(str(c))}</th>" for c in cols] + ["</tr></thead><tbody>"]
    table += ["<tr>" + "".join(f"<td>{html.escape(_text(v))}</td>" for v in r) + "</tr>"
              for r in rows]
    table_html = "\n".join(table + ["</tbody></table>"])
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    title = "rocpd query"
    if template_path:
        try:
            from jinja2 import Environment, FileSystemLoader, select_autoescape
        except ImportError:
            raise RocpdError("--template-path needs Jinja2 (pip install 'rocprof[templates]')") from None
        if not os.path.isfile(template_path):
            raise RocpdError(f"--template-path {template_path}: no such file")
        env = Environment(loader=FileSystemLoader(os.path.dirname(os.path.abspath(template_path))),
                          autoescape=select_autoescape(["html", "xml"]))
        return env.get_template(os.path.basename(template_path)).render(
            title=title, timestamp=stamp, table_html=table_html, query=query,
            databases=list(databases))

    dbs = ", ".join(html.escape(str(d)) for d in databases)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{_CSS}</style></head><body><h1>{title}</h1>"
            f"<p class='muted'>{stamp} &middot; {len(rows)} rows &middot; {dbs}</p>"
            f"<pre>{html.escape(query)}</pre>\n{table_html}\n</body></html>\n")


def to_clipboard(text: str) -> str:
    """Put ``text`` on the clipboard; returns the tool used."""
    for tool in _CLIPBOARD_TOOLS:
        if shutil.which(tool[0]):
            try:
                subprocess.run(tool, input=text.encode(), check=True, timeout=30)
            except (OSError, subprocess.SubprocessError) as e:
                raise RocpdError(f"--format clipboard: {tool[0]} failed ({e})") from None
            return tool[0]
    raise RocpdError("--format clipboard: no clipboard tool found (wl-copy, xclip, xsel, pbcopy"
                     " or clip.exe); install one, or write a file with --format csv")
