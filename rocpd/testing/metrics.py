"""Sampled device metrics in a database the builder closed, as the metrics backend stores them
(cpp/capture/metrics: a rocpd_info_pmc row per GPU and metric, a track "<metric> [<ordinal>]",
per value a rocpd_event, a rocpd_sample on the track and a rocpd_pmc_event holding the value),
written with SQL: the fixture writer has no call for sampled counters."""

from __future__ import annotations

import sqlite3


def add_metric_samples(path, metric: str, units: str, readings, *, ordinal: int = 0,
                       agent: int | None = None, category: str = "amd_smi",
                       component: str | None = None) -> None:
    """``readings``: (timestamp ns, value) of ``metric`` on GPU ``ordinal`` (rocpd_info_agent.id
    ``agent``, default the builder's gpu_agent(ordinal)); ``component``: the rocpd_info_pmc
    column (the PM sampler's "cupti_pm_sampling")."""
    agent = 2 + ordinal if agent is None else agent
    con = sqlite3.connect(path)
    try:
        (table,) = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                               " AND name LIKE 'rocpd_string%'").fetchone()
        sfx = table[len("rocpd_string"):]
        nid, pid = con.execute("SELECT nid, id FROM rocpd_info_process").fetchone()

        def insert(t, **cols):  # the guid column has its default
            return con.execute(f"INSERT INTO rocpd_{t}{sfx} ({', '.join(cols)}) VALUES"
                               f" ({', '.join('?' * len(cols))})", list(cols.values())).lastrowid

        pmc = insert("info_pmc", nid=nid, pid=pid, agent_id=agent, target_arch="GPU", name=metric,
                     symbol=metric, units=units, value_type="ABS",
                     **({"component": component} if component else {}))
        track = insert("track", nid=nid, pid=pid, name_id=insert("string", string=f"{metric} [{ordinal}]"))
        row = con.execute(f"SELECT id FROM rocpd_string{sfx} WHERE string = ?", (category,)).fetchone()
        cat = row[0] if row else insert("string", string=category)
        for ts, value in readings:
            event = insert("event", category_id=cat)
            insert("sample", track_id=track, timestamp=int(ts), event_id=event)
            insert("pmc_event", event_id=event, pmc_id=pmc, value=float(value))
        con.commit()
    finally:
        con.close()

