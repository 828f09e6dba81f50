"""Jupyter: `%load_ext rocprof`, then

    %%rocprof -d out -o cell1 --kernel-trace
    train_one_step()

profiles the cell in this kernel's process (the same options as `rocprof run`) and shows the
summary tables inline as HTML; the cell's result object has `.path` (the database) and
`.tables` (the summary DataFrames by domain)."""

from __future__ import annotations

import html
import shlex

from IPython.core.magic import Magics, cell_magic, magics_class

import rocpd
from rocpd.summary import stats

from .cli import UsageError, build_parser
from .cli.run import options_from
from .session import Session


class CellProfile:
    """What a profiled cell leaves: its database and summary tables, shown as HTML."""

    def __init__(self, path: str, tables: dict):
        self.path = path
        self.tables = tables

    def _repr_html_(self) -> str:
        parts = [f"<p><b>rocprof</b>: <code>{html.escape(self.path)}</code></p>"]
        for stem, df in self.tables.items():
            shown = stats.clip_frame(df.head(20))
            parts.append(f"<h4>{html.escape(stem)} stats</h4>" + shown.to_html(index=False))
        if not self.tables:
            parts.append("<p>nothing recorded</p>")
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"CellProfile({self.path!r}, tables={list(self.tables)})"


@magics_class
class RocprofMagics(Magics):
    @cell_magic
    def rocprof(self, line: str, cell: str):
        """%%rocprof [rocprof run options]: profile this cell."""
        try:
            args = build_parser().parse_args(["run", *shlex.split(line)])
            options = options_from(args)
        except UsageError as e:
            print(e)
            return None
        options.follow_children = False  # the kernel's own children are not this cell's
        session = Session(options)
        session.start()
        for note in session.notes:
            print(f"rocprof: {note}")
        try:
            self.shell.run_cell(cell)
        finally:
            session.stop()
        with rocpd.connect(session.path) as db:
            tables = stats.collect(db)
        return CellProfile(session.path, tables)


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(RocprofMagics)
