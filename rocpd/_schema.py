"""Access to rocpd/schema/*.sql, the single source of the schema (also embedded by the C++ writer)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SCHEMA_DIR = Path(__file__).with_name("schema")
SCHEMA_VERSION = "3"

# Every table name of schema v3, in creation order; the allow-list for dynamic SQL.
TABLES = (
    "metadata", "string", "info_node", "info_process", "info_thread", "info_agent", "info_queue",
    "info_stream", "info_pmc", "info_code_object", "info_kernel_symbol", "track", "event", "arg",
    "pmc_event", "region", "sample", "kernel_dispatch", "memory_copy", "memory_allocate",
    "pc_sample",  # this project's, for PC sampling (docs/pc-sampling-schema.md)
)


@cache
def read(name: str) -> str:
    return (SCHEMA_DIR / name).read_text()


def render(name: str, guid: str, guid_per_row: bool = False, pid: int | None = None) -> str:
    """The file with placeholders replaced exactly as the C++ writer does: the record tables'
    nid and pid are generated from ``pid`` as the writer makes them, stored when it is None or
    the guid is stored."""
    column = "DEFAULT '{{guid}}'" if guid_per_row else "GENERATED ALWAYS AS ('{{guid}}') VIRTUAL"
    stored = guid_per_row or pid is None
    nid = "" if stored else "GENERATED ALWAYS AS (1) VIRTUAL"
    pid_column = "" if stored else f"GENERATED ALWAYS AS ({int(pid)}) VIRTUAL"
    return (read(name).replace("{{guid_column}}", column).replace("{{nid_column}}", nid)
            .replace("{{pid_column}}", pid_column).replace("{{uuid}}", suffix_of(guid))
            .replace("{{guid}}", guid))


def columns_sql(schema: str, table: str) -> str:
    """SQL listing a table's columns in order, generated ones included (the guid, tables.sql):
    PRAGMA table_info leaves those out, and hidden columns (1) belong to virtual tables only."""
    return f"SELECT name FROM pragma_table_xinfo('{table}', '{schema}') WHERE hidden != 1 ORDER BY cid"


def stored_columns_sql(schema: str, table: str) -> str:
    """As columns_sql, without generated columns: the ones an INSERT may name."""
    return f"SELECT name FROM pragma_table_xinfo('{table}', '{schema}') WHERE hidden = 0 ORDER BY cid"


def suffix_of(guid: str) -> str:
    return "_" + guid.replace("-", "_")


@cache
def canonical_columns() -> dict[str, tuple[str, ...]]:
    """Column order per table as tables.sql declares it (the contract)."""
    out: dict[str, tuple[str, ...]] = {}
    text = read("tables.sql")
    for m in re.finditer(r'CREATE TABLE IF NOT EXISTS "rocpd_(\w+)\{\{uuid\}\}" \((.*?)\n\);', text, re.S):
        cols = re.findall(r'^\s+"(\w+)"', m.group(2), re.M)
        out[m.group(1)] = tuple(cols)
    return out


def view_statements() -> list[str]:
    """views.sql split into statements; each is re-created as a TEMP view by the reader."""
    text = "\n".join(line for line in read("views.sql").splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*$", text, flags=re.M) if s.strip()]


def view_names() -> list[str]:
    return [re.search(r'VIEW IF NOT EXISTS "(\w+)"', s).group(1) for s in view_statements()]


# ROCm keeps a ROCTx range's message in its event's extdata; the region's own name may be generic
# (roctxRangePush). json_valid first: json_extract raises on malformed JSON, and one bad row must
# not fail a whole summary or export. An empty message counts as none.
def roctx_message_sql(extdata: str = "extdata") -> str:
    """SQL for the message of a region's event, or NULL; ``extdata`` is a column expression."""
    return f"(CASE WHEN json_valid({extdata}) THEN NULLIF(json_extract({extdata}, '$.message'), '') END)"


def region_name_sql(category: str = "category", extdata: str = "extdata", name: str = "name") -> str:
    """SQL for the name a region is shown by: a ROCTx range (category MARKER*) by its message,
    anything else, and a range without a message, by its name. Arguments are column expressions."""
    return f"COALESCE(CASE WHEN {category} LIKE 'MARKER%' THEN {roctx_message_sql(extdata)} END, {name})"


# A launch site is stored once, as rocpd_event rows of category LAUNCH_SITE_CATEGORY (not
# rocpd_string rows: its unique index would hold each long JSON twice): the site's node holds
# [its frame] in call_stack and, in parent_stack_id, the event id of the node holding the frames
# outward of it as a JSON list (shared by most sites of a program). An event launched there
# holds {"site": <the site node's event id>} in call_stack and an empty line_info. These give
# back what the columns mean: the whole list, innermost user frame first, and that frame.
# Databases written before this layout ({"site": <id of a rocpd_string row of the whole list>})
# read the same; ROCm's databases store the JSON itself, and pass through unchanged.
LAUNCH_SITE_CATEGORY = "PYTHON_LAUNCH_SITE"


def _site(event: str, column: str) -> str:
    """``column`` (call_stack or line_info) of the rocpd_event row aliased ``event``, its launch
    site's frames given back where it points at one."""
    ref = f"json_extract({event}.call_stack, '$.site')"
    if column == "call_stack":
        node = ("substr(SN.call_stack, 1, length(SN.call_stack) - 1) || COALESCE(',' || substr(("
                "SELECT SO.call_stack FROM rocpd_event SO WHERE SO.id = SN.parent_stack_id "
                "AND SO.guid = SN.guid), 2), ']')")
        before = "CS.string"
    else:
        node = "substr(SN.call_stack, 2, length(SN.call_stack) - 2)"
        before = "json_extract(CS.string, '$[0]')"
    return (f"CASE WHEN {event}.call_stack LIKE '{{\"site\":%' THEN COALESCE((SELECT {node} "
            f"FROM rocpd_event SN JOIN rocpd_string SC ON SC.id = SN.category_id AND SC.guid = "
            f"SN.guid AND SC.string = '{LAUNCH_SITE_CATEGORY}' WHERE SN.id = {ref} AND SN.guid = "
            f"{event}.guid), (SELECT {before} FROM rocpd_string CS WHERE CS.id = {ref} AND "
            f"CS.guid = {event}.guid)) ELSE {event}.{column} END")


def call_stack_sql(event: str = "E") -> str:
    return _site(event, "call_stack")


def line_info_sql(event: str = "E") -> str:
    return _site(event, "line_info")


def queue_handle_sql(queue_id: str = "queue_id", guid: str = "guid") -> str:
    """SQL for a dispatch's queue as rocprofv3's CSV names it: the runtime's queue id (what
    rocprofiler-sdk's queue handle is), which our HSA capture keeps in the queue's extdata as
    ``hsa_queue_id``; otherwise the stored id (ROCm's writer stores the handle itself)."""
    return (f"COALESCE((SELECT CASE WHEN json_valid(Q.extdata) THEN json_extract(Q.extdata,"
            f" '$.hsa_queue_id') END FROM rocpd_info_queue Q WHERE Q.id = {queue_id}"
            f" AND Q.guid = {guid}), {queue_id})")
