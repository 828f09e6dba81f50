"""ROCm's ``rocpd.read_nodes/read_processes/read_threads/read_agents``: lists of objects with the
attributes ROCm's compiled module gives them (its types.hpp), read from the same tables and
views. DataFrames of the same rows: ``Connection.processes()``, ``.threads()``, ``.agents()``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields


@dataclass
class Node:
    nid: int
    hash: int
    machine_id: str
    hostname: str
    system_name: str
    system_release: str
    system_version: str
    guid: str = ""
    hardware_name: str = ""
    domain_name: str = ""


@dataclass
class Process:
    nid: int
    machine_id: str
    hostname: str
    system_name: str
    system_release: str
    system_version: str
    ppid: int
    pid: int
    init: int
    start: int
    end: int
    fini: int
    command: str
    guid: str = ""


@dataclass
class Thread:
    nid: int
    machine_id: str
    hostname: str
    system_name: str
    system_release: str
    system_version: str
    ppid: int
    pid: int
    tid: int
    start: int
    end: int
    name: str
    guid: str = ""


@dataclass
class Agent:
    """An agent as ROCm's reader shows it: ``node_id``, ``logical_node_id``, ``gpu_index``,
    ``name`` and ``product_name`` from the agent_info the writer kept in extdata (ROCm's), else
    from the columns (ours); the columns as they are besides."""
    node_id: int
    logical_node_id: int
    gpu_index: int
    name: str
    user_name: str
    product_name: str
    id: int = 0
    guid: str = ""
    nid: int = 0
    pid: int = 0
    type: str = ""
    absolute_index: int = 0
    logical_index: int = 0
    type_index: int = 0
    uuid: str = ""
    vendor_name: str = ""
    model_name: str = ""
    extdata: dict = field(default_factory=dict, repr=False)


def _where(condition: str) -> str:
    """ROCm passes SQL after the table name ("WHERE pid = 1"); a bare condition works too."""
    c = (condition or "").strip()
    if not c or re.match(r"(?i)(where|order|limit|group)\b", c):
        return c
    return f"WHERE {c}"


def _rows(db, source: str, condition: str) -> list[dict]:
    cur = db.execute(f"SELECT * FROM {source} {_where(condition)}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _pick(cls, row: dict, **extra):
    known = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in row.items() if k in known and k not in extra}, **extra)


def read_nodes(db, condition: str = "") -> list[Node]:
    return [Node(nid=r["id"], hash=r["hash"], machine_id=r["machine_id"], hostname=r["hostname"],
                 system_name=r["system_name"], system_release=r["release"],
                 system_version=r["version"], guid=r["guid"],
                 hardware_name=r["hardware_name"], domain_name=r["domain_name"])
            for r in _rows(db, "rocpd_info_node", condition)]


def read_processes(db, condition: str = "") -> list[Process]:
    return [_pick(Process, r) for r in _rows(db, "processes", condition)]


def read_threads(db, condition: str = "") -> list[Thread]:
    """Threads; one without a name is "Thread <tid>", the main thread's name ends in " [main]"
    (as ROCm's reader names them)."""
    out = []
    for r in _rows(db, "threads", condition):
        name = r["name"] or f"Thread {r['tid']}"
        if r["tid"] == r["pid"] and "[main]" not in name:
            name += " [main]"
        out.append(_pick(Thread, {**r, "name": name}))
    return out


def read_agents(db, condition: str = "") -> list[Agent]:
    out = []
    for r in _rows(db, "rocpd_info_agent", condition):
        try:
            info = json.loads(r["extdata"] or "{}")
        except ValueError:
            info = {}
        info = info if isinstance(info, dict) else {}
        gpu = r["type_index"] if r["type"] == "GPU" else -1
        out.append(_pick(Agent, {**r, "extdata": info},
                         node_id=info.get("node_id", r["absolute_index"]),
                         logical_node_id=info.get("logical_node_id", r["logical_index"]),
                         gpu_index=info.get("gpu_index", gpu),
                         name=info.get("name", r["name"]) or "",
                         product_name=info.get("product_name", r["product_name"]) or ""))
    return out
