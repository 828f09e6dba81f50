"""Exporters: one module per format, each exposing ``write(db, path, **options)``.

Options every exporter understands besides the filters (ROCm's ``rocpd convert`` settings):
``agent_index`` names agents as ROCm's ``--agent-index-value`` does: in CSV the Agent_Id
(:func:`agent_sql`; relative by default, "Agent 1", as rocprofv3's CSV), in the traces the
number in a GPU's label (rocpd.export._activity; type-relative by default, "GPU 0")."""

from __future__ import annotations

import re

FORMATS = ("csv", "chrome", "collapsed", "flamegraph", "perfetto", "otf2")

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
