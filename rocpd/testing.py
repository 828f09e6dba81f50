"""Build rocpd databases exactly the way the C++ writer does, for tests, notebooks and benchmarks.

tables.sql (placeholders replaced) -> table_views.sql -> views.sql -> metadata rows
schema_version=3 / uuid / guid -> rows. Ids follow ROCm's conventions: process id = pid, thread id =
tid, agent id = node index (CPU 0, GPUs 1..n), queue/stream 0 = "Default Queue"/"Default Stream".
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import uuid as _uuid

from . import _schema


def new_guid() -> str:
    """A time-ordered (version-7 style) UUID string."""
    ms = time.time_ns() // 1_000_000
    rand = _uuid.uuid4().int & ((1 << 74) - 1)
    v = (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(_uuid.UUID(int=v))


class DatabaseBuilder:
    def __init__(self, path, guid: str | None = None, pid: int = 1000, hostname: str = "host0",
                 gpus: int = 1, rank: int | None = None, command: str = "python train.py"):
        self.path = os.fspath(path)
        self.guid = guid or new_guid()
        self.pid = pid
        self.conn = sqlite3.connect(self.path)
        c = self.conn
        for name in ("tables.sql", "table_views.sql", "views.sql"):
            c.executescript(_schema.render(name, self.guid))
        sfx = _schema.suffix_of(self.guid)
        self._t = lambda t: f'"rocpd_{t}{sfx}"'  # inserts go to the real tables, as the writer's do
        c.executemany(f"INSERT INTO {self._t('metadata')} (tag, value) VALUES (?, ?)", [
            ("schema_version", "3"), ("uuid", _schema.suffix_of(self.guid)), ("guid", self.guid)])
        self._strings: dict[str, int] = {}
        self._symbols: dict[str, int] = {}
        self._threads: set[int] = set()
        self._corr = 0
        c.execute(f"INSERT INTO {self._t('info_node')} (id, hash, machine_id, system_name, hostname)"
                  " VALUES (1, ?, ?, 'Linux', ?)", (abs(hash(hostname)) % (1 << 62), hostname, hostname))
        env = {"RANK": str(rank)} if rank is not None else {}
        c.execute(f"INSERT INTO {self._t('info_process')} (id, nid, ppid, pid, init, fini, start,"
                  ' "end", command, environment) VALUES (?, 1, 1, ?, 0, 0, 0, 0, ?, ?)',
                  (pid, pid, command, json.dumps(env)))
        self.thread(pid, "MainThread")
        c.execute(f"INSERT INTO {self._t('info_agent')} (id, nid, pid, type, absolute_index,"
                  " logical_index, type_index, name) VALUES (0, 1, ?, 'CPU', 0, 0, 0, 'cpu0')", (pid,))
        for i in range(gpus):
            c.execute(f"INSERT INTO {self._t('info_agent')} (id, nid, pid, type, absolute_index,"
                      " logical_index, type_index, name, product_name) VALUES (?, 1, ?, 'GPU', ?, ?, ?,"
                      " ?, 'Test GPU')", (i + 1, pid, i + 1, i + 1, i, f"gpu{i}"))
        c.execute(f"INSERT INTO {self._t('info_queue')} (id, nid, pid, name) VALUES (0, 1, ?,"
                  " 'Default Queue')", (pid,))
        c.execute(f"INSERT INTO {self._t('info_stream')} (id, nid, pid, name) VALUES (0, 1, ?,"
                  " 'Default Stream')", (pid,))
        c.execute(f"INSERT INTO {self._t('info_code_object')} (id, nid, pid, agent_id, uri,"
                  " storage_type) VALUES (1, 1, ?, 1, 'file:///test.hsaco', 'FILE')", (pid,))

    # -- helpers ---------------------------------------------------------------------------------
    def string(self, s: str) -> int:
        if s not in self._strings:
            cur = self.conn.execute(f"INSERT INTO {self._t('string')} (string) VALUES (?)", (s,))
            self._strings[s] = cur.lastrowid
        return self._strings[s]

    def thread(self, tid: int, name: str = "") -> int:
        if tid not in self._threads:
            self.conn.execute(f"INSERT INTO {self._t('info_thread')} (id, nid, ppid, pid, tid, name)"
                              " VALUES (?, 1, 1, ?, ?, ?)", (tid, self.pid, tid, name))
            self._threads.add(tid)
        return tid

    def stream(self, sid: int, name: str | None = None) -> int:
        self.conn.execute(f"INSERT OR IGNORE INTO {self._t('info_stream')} (id, nid, pid, name)"
                          " VALUES (?, 1, ?, ?)", (sid, self.pid, name or f"Stream {sid}"))
        return sid

    def symbol(self, name: str) -> int:
        if name not in self._symbols:
            cur = self.conn.execute(
                f"INSERT INTO {self._t('info_kernel_symbol')} (nid, pid, code_object_id, kernel_name,"
                " display_name, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES (1, ?, 1, ?, ?,"
                " 16, 32, 0)", (self.pid, name, name))
            self._symbols[name] = cur.lastrowid
        return self._symbols[name]

    def event(self, category: str, correlation_id: int | None = None, extdata=None,
              call_stack=None) -> int:
        cur = self.conn.execute(
            f"INSERT INTO {self._t('event')} (category_id, correlation_id, extdata, call_stack)"
            " VALUES (?, ?, ?, ?)", (self.string(category), correlation_id, json.dumps(extdata or {}),
                                     json.dumps(call_stack or {})))
        return cur.lastrowid

    def next_correlation(self) -> int:
        self._corr += 1
        return self._corr

    def metadata(self, tag: str, value) -> None:
        self.conn.execute(f"INSERT INTO {self._t('metadata')} (tag, value) VALUES (?, ?)", (tag, str(value)))

    # -- records ---------------------------------------------------------------------------------
    def region(self, category: str, name: str, start: int, end: int, tid: int | None = None,
               message: str | None = None, correlation_id: int | None = None) -> int:
        tid = self.thread(tid if tid is not None else self.pid)
        ext = {"message": message} if message is not None else None
        ev = self.event(category, correlation_id, ext)
        cur = self.conn.execute(
            f'INSERT INTO {self._t("region")} (nid, pid, tid, start, "end", name_id, event_id)'
            " VALUES (1, ?, ?, ?, ?, ?, ?)", (self.pid, tid, start, end, self.string(name), ev))
        return cur.lastrowid

    def marker(self, message: str, start: int, end: int, tid: int | None = None) -> int:
        """A ROCTx range as ROCm stores it: region named by the message, message in extdata."""
        return self.region("MARKER_CORE_API", message, start, end, tid=tid, message=message)

    def kernel(self, name: str, start: int, end: int, agent: int = 1, stream: int = 0,
               tid: int | None = None, correlation_id: int | None = None, region: str | None = None,
               grid=(1024, 1, 1), block=(256, 1, 1)) -> int:
        tid = self.thread(tid if tid is not None else self.pid)
        corr = correlation_id if correlation_id is not None else self.next_correlation()
        ev = self.event("KERNEL_DISPATCH", corr)
        cur = self.conn.execute(
            f'INSERT INTO {self._t("kernel_dispatch")} (nid, pid, tid, agent_id, kernel_id,'
            ' dispatch_id, queue_id, stream_id, start, "end", private_segment_size,'
            " group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x,"
            " grid_size_y, grid_size_z, region_name_id, event_id) VALUES (1, ?, ?, ?, ?, ?, 0, ?, ?, ?,"
            " 0, 0, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.pid, tid, agent, self.symbol(name), corr, stream, start, end, *block, *grid,
             self.string(region) if region else None, ev))
        return cur.lastrowid

    def memory_copy(self, name: str, start: int, end: int, size: int, src_agent: int = 0,
                    dst_agent: int = 1, stream: int = 0, tid: int | None = None,
                    correlation_id: int | None = None) -> int:
        tid = self.thread(tid if tid is not None else self.pid)
        corr = correlation_id if correlation_id is not None else self.next_correlation()
        ev = self.event("MEMORY_COPY", corr)
        cur = self.conn.execute(
            f'INSERT INTO {self._t("memory_copy")} (nid, pid, tid, start, "end", name_id,'
            " dst_agent_id, dst_address, src_agent_id, src_address, size, queue_id, stream_id,"
            " event_id) VALUES (1, ?, ?, ?, ?, ?, ?, 4096, ?, 8192, ?, 0, ?, ?)",
            (self.pid, tid, start, end, self.string(name), dst_agent, src_agent, size, stream, ev))
        return cur.lastrowid

    def allocation(self, type_: str, start: int, end: int, size: int, agent: int = 1,
                   level: str = "REAL", address: int = 65536) -> int:
        ev = self.event("MEMORY_ALLOCATION", self.next_correlation())
        cur = self.conn.execute(
            f'INSERT INTO {self._t("memory_allocate")} (nid, pid, tid, agent_id, type, level, start,'
            ' "end", address, size, event_id) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            (self.pid, self.pid, agent, type_, level, start, end, address, size, ev))
        return cur.lastrowid

    def sample(self, track: str, timestamp: int, category: str = "PYTHON_SAMPLE",
               call_stack=None, tid: int | None = None) -> int:
        tid = self.thread(tid if tid is not None else self.pid)
        row = self.conn.execute(f"SELECT id FROM {self._t('track')} WHERE name_id = ? AND tid = ?",
                                (self.string(track), tid)).fetchone()
        track_id = row[0] if row else self.conn.execute(
            f"INSERT INTO {self._t('track')} (nid, pid, tid, name_id) VALUES (1, ?, ?, ?)",
            (self.pid, tid, self.string(track))).lastrowid
        ev = self.event(category, None, None, call_stack)
        return self.conn.execute(
            f"INSERT INTO {self._t('sample')} (track_id, timestamp, event_id) VALUES (?, ?, ?)",
            (track_id, timestamp, ev)).lastrowid

    def kernels_bulk(self, rows) -> None:
        """Fast path for benchmarks: rows of (name, start, end); no event rows."""
        ids = {}
        data = []
        for i, (name, start, end) in enumerate(rows):
            k = ids.get(name) or ids.setdefault(name, self.symbol(name))
            data.append((self.pid, self.pid, k, i, start, end))
        self.conn.executemany(
            f'INSERT INTO {self._t("kernel_dispatch")} (nid, pid, tid, agent_id, kernel_id,'
            ' dispatch_id, queue_id, stream_id, start, "end", workgroup_size_x, workgroup_size_y,'
            " workgroup_size_z, grid_size_x, grid_size_y, grid_size_z) VALUES (1, ?, ?, 1, ?, ?, 0, 0,"
            " ?, ?, 256, 1, 1, 1024, 1, 1)", data)

    def close(self) -> str:
        self.conn.commit()
        self.conn.close()
        return self.path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
