"""Exporters: one module per format, each exposing ``write(db, path, **options)`` and
declaring itself in a ``FORMAT`` literal: its name, aliases, the suffix of its file, its target
kind (``file``: one file; ``prefix``: files named PREFIX_*; ``folder``: an archive in a folder),
the name ``rocprof run -f`` knows it by (rocprofv3's; absent: not offered there) and a label for
help. :func:`formats` reads those literals without importing the exporters (their imports are
heavy, and ``rocprof run --help`` lists them), so adding a format is adding its module.

Options every exporter understands besides the filters (ROCm's ``rocpd convert`` settings):
``agent_index`` names agents as ROCm's ``--agent-index-value`` does: in CSV the Agent_Id
(:func:`agent_sql`; relative by default, "Agent 1", as rocprofv3's CSV), in the traces the
number in a GPU's label (rocpd.export._activity; type-relative by default, "GPU 0")."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import os
import re

from ..io.output_file import names_folder

TARGETS = ("file", "prefix", "folder")


@dataclasses.dataclass(frozen=True)
class Format:
    name: str               # the module's name (rocpd.export.<name>)
    suffix: str             # of the file or archive ROCm's naming gives it: NAME_results<suffix>
    target: str             # file, prefix or folder (TARGETS)
    aliases: tuple[str, ...] = ()
    rocprofv3: str | None = None  # its name under `rocprof run -f`; None: not offered there
    label: str = ""         # what it is, for help ("Chrome trace")

    def writer(self):
        return importlib.import_module(f"{__name__}.{self.name}")

    def write_to(self, db, output: str, **options) -> list[str]:
        """Written where ours names outputs (``rocpd convert DB -f FMT -o OUTPUT``): OUTPUT is
        the file, the file-name prefix or the archive's folder; an OUTPUT that names a folder
        (one that exists, or ending in "/") gets a file named as rocprofv3 names it with no -o,
        FOLDER/results<suffix> (file; a prefix format does the same, in_folder). Missing
        parent folders are made, as rocprofv3 makes its output folders."""
        if self.target == "file":
            output = in_folder(output, f"results{self.suffix}")
            os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
        result = self.writer().write(db, output, **options)
        return [str(r) for r in (result if isinstance(result, list) else [result]) if r]

    def write_named(self, db, folder: str, name: str, **options) -> list[str]:
        """Written as ROCm's rocpd convert and rocprofv3 name outputs: FOLDER/NAME_kernel_trace.csv
        ... (prefix), FOLDER/NAME_results<suffix> (file), the archive NAME_results in FOLDER
        (folder, sharing it with the database's other outputs)."""
        write = self.writer().write
        if self.target == "prefix":
            result = write(db, os.path.join(folder, name), **options)
        elif self.target == "folder":  # an archive's name cannot hold a folder: NAME's goes to FOLDER
            where = os.path.join(folder or ".", name)
            result = write(db, os.path.dirname(where) or ".",
                           archive_name=f"{os.path.basename(where)}_results", shared=True,
                           **options)
        else:
            result = write(db, os.path.join(folder, f"{name}_results{self.suffix}"), **options)
        return [str(r) for r in (result if isinstance(result, list) else [result]) if r]


def in_folder(path: str, name: str) -> str:
    """``path``, or ``path/name`` where ``path`` names a folder (io.output_file.names_folder)."""
    if names_folder(path):
        return os.path.join(path, name)
    return path


def _declared(path: str) -> dict | None:
    """A module's FORMAT literal (one dict of strings and lists of strings, JSON-compatible),
    read from its source: a plain text scan and json, cheap enough for every `rocprof run`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    at = text.find("\nFORMAT = {")
    if at < 0:
        return None
    start = text.index("{", at)
    return json.loads(text[start:text.index("}", start) + 1])


@functools.cache
def formats() -> tuple[Format, ...]:
    """Every export format: the modules of this package that declare a FORMAT, by name."""
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    for entry in sorted(os.listdir(here)):
        if entry.endswith(".py") and not entry.startswith("_"):
            declared = _declared(os.path.join(here, entry))
            if declared is not None:
                fmt = Format(name=entry[:-3], **{k: tuple(v) if k == "aliases" else v
                                                  for k, v in declared.items()})
                if fmt.target not in TARGETS:
                    raise ValueError(f"rocpd.export.{fmt.name}: target must be one of "
                                     f"{', '.join(TARGETS)}, not {fmt.target!r}")
                out.append(fmt)
    return tuple(out)


def names() -> dict[str, Format]:
    """Every name and alias → its format."""
    return {n: f for f in formats() for n in (f.name, *f.aliases)}


def find(name: str) -> Format:
    try:
        return names()[name.lower()]
    except KeyError:
        raise ValueError(f"unknown export format {name!r}: one of {', '.join(sorted(names()))}") from None

# ROCm's --agent-index-value (output_config.py; metadata.cpp create_agent_index): which of an
# agent's indexes names it. relative (ROCm's CSV default): logical node id, "Agent 1";
# absolute: node id ignoring cgroups, "Agent 2"; type-relative: numbered per type, "GPU 0".
AGENT_INDEX = ("absolute", "relative", "type-relative")
_INDEX_COLUMN = {"absolute": "agent_abs_index", "relative": "agent_log_index",
                 "type-relative": "agent_type_index"}
_RELATIVE_LABEL = re.compile(r"'Agent ' \|\| (\w*)agent_log_index")


def check_agent_index(mode: str) -> str:
    if mode not in AGENT_INDEX:
        raise ValueError(f"agent_index must be one of {', '.join(AGENT_INDEX)}, not {mode!r}")
    return mode


def agent_sql(sql: str, mode: str = "relative") -> str:
    """``sql`` with every ``'Agent ' || <prefix>agent_log_index`` label (the relative form, as the
    CSV queries spell it) written for ``mode``."""
    check_agent_index(mode)
    if mode == "relative":
        return sql
    if mode == "absolute":
        return _RELATIVE_LABEL.sub(r"'Agent ' || \1agent_abs_index", sql)
    return _RELATIVE_LABEL.sub(r"\1agent_type || ' ' || \1agent_type_index", sql)


def agent_column(mode: str = "relative", prefix: str = "") -> str:
    """The kernels/memory_copies view column holding the agent's number under ``mode``."""
    return prefix + _INDEX_COLUMN[check_agent_index(mode)]
