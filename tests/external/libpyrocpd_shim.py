"""TEST-ONLY SHIM standing in for ROCm's compiled module ``libpyrocpd`` (C++/pybind11, not buildable
here), so that ROCm's own pure-Python ``rocpd`` package (tests/data/rocm_rocpd_python) runs
unchanged. It is installed as ``rocm_rocpd.libpyrocpd`` in a child process by rocm_client.py and
is never part of rocprof.

What it provides, each following the named ROCm source (rocm-systems, the commit named in
tests/data/rocm_rocpd_python/README.md), projects/rocprofiler-sdk/source/lib/...:
- ``load_schema``: rocprofiler-sdk-rocpd/sql.cpp (rocpd_sql_load_schema): reads ROCm's schema SQL
  from $ROCPD_SCHEMA_PATH (tests/data/rocm_rocpd_views) and substitutes {{uuid}}/{{guid}};
- ``connect``, ``RocpdImportData``, ``output_config``, the enums: python/rocpd/libpyrocpd.cpp;
- ``read_agents/nodes/processes/threads``: libpyrocpd.cpp read_impl + source/types.hpp;
- ``write_csv``: libpyrocpd.cpp write_csv + source/csv.cpp (CsvManager), the rows read from
  ROCm's own views exactly as those queries read them.
Perfetto and OTF2 writers are C++ libraries and are not shimmed: they raise.
"""

from __future__ import annotations

import json
import os
import sqlite3
from types import SimpleNamespace


class sql_engine:  # noqa: N801 - pybind11 enum names as ROCm's module spells them
    sqlite3 = "sqlite3"


class sql_schema:  # noqa: N801
    rocpd_tables = "rocpd_tables.sql"
    rocpd_indexes = "rocpd_indexes.sql"
    rocpd_views = "rocpd_views.sql"
    data_views = "data_views.sql"
    summary_views = "summary_views.sql"
    marker_views = "marker_views.sql"


class sql_option:  # noqa: N801
    none = 0
    sqlite3_pragma_foreign_keys = 1


class agent_indexing:  # noqa: N801
    node = "absolute"
    logical_node = "relative"
    logical_node_type = "type-relative"


class schema_jinja_variables:  # noqa: N801
    def __init__(self):
        self.uuid = None
        self.guid = None


def load_schema(engine, kind, options, variables):
    text = open(os.path.join(os.environ["ROCPD_SCHEMA_PATH"], kind)).read()
    if options == sql_option.sqlite3_pragma_foreign_keys:
        text = f"PRAGMA foreign_keys = ON;\n\n{text}"
    if variables.uuid is not None:
        uuid = variables.uuid
        if uuid and not uuid.startswith("_"):
            uuid = f"_{uuid}"
        text = text.replace("{{uuid}}", uuid.replace("-", "_"))
    if variables.guid is not None:
        text = text.replace("{{guid}}", variables.guid)
    return text


def format_path(path, tag=""):
    return str(path).replace("%tag%", tag)


def connect(dbpath, *args, **kwargs):
    return sqlite3.connect(dbpath, *args, **kwargs)


class RocpdImportData:
    def __init__(self, *args):
        self.connection, self.databases = None, []
        if len(args) == 1:
            self.connection, self.databases = args[0].connection, list(args[0].databases)
        elif len(args) == 2:
            if not isinstance(args[0], sqlite3.Connection):
                raise TypeError("libpyrocpd.RocpdImportData needs a sqlite3.Connection")
            self.connection, self.databases = args[0], list(args[1])


class output_config:  # noqa: N801
    def __init__(self):
        self.output_path, self.output_file, self.tmp_directory = "", "", ""
        self.csv = self.pftrace = self.otf2 = False
        self.kernel_rename = self.group_by_queue = False
        self.agent_index_value = agent_indexing.logical_node
        self.perfetto_shmem_size_hint, self.perfetto_buffer_size = 64, 1024 * 1024
        self.perfetto_backend, self.perfetto_buffer_fill_policy = "inprocess", "discard"


# -- read_* (types.hpp: the fields each object exposes) -----------------------------------------
def _rows(data, table, condition):
    cur = data.connection.execute(f"SELECT * FROM {table} {condition}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def read_nodes(data, condition=""):
    return [SimpleNamespace(nid=r["id"], hash=r["hash"], machine_id=r["machine_id"],
                            hostname=r["hostname"], system_name=r["system_name"],
                            system_release=r["release"], system_version=r["version"], guid=r["guid"])
            for r in _rows(data, "rocpd_info_node", condition)]


_NODE = ("nid", "machine_id", "hostname", "system_name", "system_release", "system_version")


def read_processes(data, condition=""):
    keys = (*_NODE, "ppid", "pid", "init", "start", "end", "fini", "command")
    return [SimpleNamespace(**{k: r[k] for k in keys}) for r in _rows(data, "processes", condition)]


def read_threads(data, condition=""):
    out = []
    for r in _rows(data, "threads", condition):
        t = SimpleNamespace(**{k: r[k] for k in (*_NODE, "ppid", "pid", "tid", "start", "end")})
        t.name = r["name"] or f"Thread {r['tid']}"
        if r["tid"] == r["pid"] and "[main]" not in t.name:
            t.name += " [main]"
        out.append(t)
    return out


def read_agents(data, condition=""):
    out = []
    for r in _rows(data, "rocpd_info_agent", condition):
        info = json.loads(r["extdata"] or "{}")  # the agent_info the writer serialised
        out.append(SimpleNamespace(node_id=info.get("node_id", 0),
                                   logical_node_id=info.get("logical_node_id", 0),
                                   gpu_index=info.get("gpu_index", 0), name=info.get("name", ""),
                                   user_name=r["user_name"],
                                   product_name=info.get("product_name", "")))
    return out


def write_perfetto(data, config):
    raise NotImplementedError("the libpyrocpd shim has no Perfetto writer (C++ in ROCm)")


def write_otf2(data, config):
    raise NotImplementedError("the libpyrocpd shim has no OTF2 writer (C++ in ROCm)")


# -- write_csv (csv.cpp) ------------------------------------------------------------------------
API = ["Guid", "Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
       "Start_Timestamp", "End_Timestamp"]
HEADERS = {
    "kernel_trace.csv": ["Guid", "Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id",
                         "Dispatch_Id", "Kernel_Id", "Kernel_Name", "Correlation_Id",
                         "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size",
                         "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X",
                         "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y",
                         "Grid_Size_Z"],
    "memory_copy_trace.csv": ["Guid", "Kind", "Direction", "Stream_Id", "Source_Agent_Id",
                              "Destination_Agent_Id", "Correlation_Id", "Start_Timestamp",
                              "End_Timestamp"],
    "memory_allocation_trace.csv": ["Guid", "Kind", "Operation", "Agent_Id", "Allocation_Size",
                                    "Address", "Correlation_Id", "Start_Timestamp",
                                    "End_Timestamp"],
    "scratch_memory_trace.csv": ["Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id",
                                 "Alloc_Flags", "Start_Timestamp", "End_Timestamp"],
    "hip_api_trace.csv": API, "hsa_api_trace.csv": API, "marker_api_trace.csv": API,
    "rccl_api_trace.csv": API,
    "counter_collection.csv": ["Pid", "Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id",
                               "Process_Id", "Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name",
                               "Workgroup_Size", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                               "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value",
                               "Start_Timestamp", "End_Timestamp"],
}


def _agent(cfg, r, prefix=""):
    """create_agent_index(...).as_string() for the configured --agent-index-value."""
    if cfg.agent_index_value == agent_indexing.logical_node_type:
        return f"{r[prefix + 'agent_type']} {r[prefix + 'agent_type_index']}"
    col = "agent_abs_index" if cfg.agent_index_value == agent_indexing.node else "agent_log_index"
    return f"Agent {r[prefix + col]}"


def _q(v):
    return f'"{v}"'


def _marker_name(r):
    try:
        msg = json.loads(r["extdata"] or "{}").get("message", "")
    except ValueError:
        msg = ""
    return msg or r["name"]


def write_csv(data, cfg):
    files: dict[str, object] = {}

    def line(name, *cells):
        if name not in files:
            os.makedirs(cfg.output_path, exist_ok=True)
            stem = f"{cfg.output_file}_{name}" if cfg.output_file else name
            files[name] = open(os.path.join(cfg.output_path, stem), "w")
            files[name].write(",".join(_q(h) for h in HEADERS[name]) + "\n")
        files[name].write(",".join("" if c is None else str(c) for c in cells) + "\n")

    order = " ORDER BY start ASC, end DESC"
    for node in _rows(data, "rocpd_info_node", ""):
        for p in _rows(data, "processes", f"WHERE guid = '{node['guid']}' AND nid = {node['id']}"):
            where = f"WHERE guid = '{p['guid']}' AND nid = {node['id']} AND pid = {p['pid']}"

            def rows(view, extra="", where=where):
                return _rows(data, view, f"{where} {extra}{order}")

            for k in rows("kernels"):
                line("kernel_trace.csv", _q(k["guid"]), _q("KERNEL_DISPATCH"), _q(_agent(cfg, k)),
                     k["queue_id"], k["stream_id"], k["tid"], k["dispatch_id"], k["kernel_id"],
                     _q(k["region"] if cfg.kernel_rename else k["name"]), k["stack_id"] or 0,
                     k["start"], k["end"], k["lds_size"], k["scratch_size"], k["vgpr_count"],
                     k["accum_vgpr_count"], k["sgpr_count"], k["workgroup_x"], k["workgroup_y"],
                     k["workgroup_z"], k["grid_x"], k["grid_y"], k["grid_z"])
            for m in rows("memory_copies"):
                line("memory_copy_trace.csv", _q(m["guid"]), _q("MEMORY_COPY"), _q(m["name"]),
                     m["stream_id"], _q(_agent(cfg, m, "src_")), _q(_agent(cfg, m, "dst_")),
                     m["stack_id"] or 0, m["start"], m["end"])
            for a in rows("memory_allocations"):
                op = "MEMORY_ALLOCATION_" + ("ALLOCATE" if a["type"] == "ALLOC" else a["type"])
                agent = _agent(cfg, a) if op != "MEMORY_ALLOCATION_FREE" else '""'
                line("memory_allocation_trace.csv", _q(a["guid"]), _q("MEMORY_ALLOCATION"), _q(op),
                     _q(agent), a["size"], _q(f"0x{(a['address'] or 0) & (2**64 - 1):016x}"),
                     a["stack_id"] or 0, a["start"], a["end"])
            for prefix, name in (("HIP_", "hip_api_trace.csv"), ("HSA_", "hsa_api_trace.csv"),
                                 ("RCCL_", "rccl_api_trace.csv")):
                for r in rows("regions", f"AND category LIKE '{prefix}%'"):
                    line(name, _q(r["guid"]), _q(r["category"]), _q(r["name"]), r["pid"], r["tid"],
                         r["stack_id"] or 0, r["start"], r["end"])
            for r in rows("regions_and_samples", "AND category LIKE 'MARKER_%'"):
                line("marker_api_trace.csv", _q(r["guid"]), _q(r["category"]), _q(_marker_name(r)),
                     r["pid"], r["tid"], r["stack_id"] or 0, r["start"], r["end"])
            for c in rows("counters_collection"):
                line("counter_collection.csv", c["guid"], c["stack_id"] or 0, c["dispatch_id"],
                     _q(_agent(cfg, c)), c["queue_id"], c["pid"], c["tid"], c["grid_size"],
                     c["kernel_id"], _q(c["kernel_name"]), c["workgroup_size"], c["lds_block_size"],
                     c["scratch_size"], c["vgpr_count"], c["accum_vgpr_count"], c["sgpr_count"],
                     _q(c["counter_name"]), c["value"], c["start"], c["end"])
            for s in rows("scratch_memory"):
                line("scratch_memory_trace.csv", _q("SCRATCH_MEMORY"),
                     _q(f"SCRATCH_MEMORY_{s['operation']}"), _q(_agent(cfg, s)), s["queue_id"],
                     s["tid"], s["alloc_flags"], s["start"], s["end"])
            agent_info(data, cfg, node)
    for fh in files.values():
        fh.close()


AGENT_INFO = ["Guid", "Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count",
              "Cpu_Core_Id_Base", "Simd_Id_Base", "Max_Waves_Per_Simd", "Lds_Size_In_Kb",
              "Gds_Size_In_Kb", "Num_Gws", "Wave_Front_Size", "Num_Xcc", "Cu_Count", "Array_Count",
              "Num_Shader_Banks", "Simd_Arrays_Per_Engine", "Cu_Per_Simd_Array", "Simd_Per_Cu",
              "Max_Slots_Scratch_Cu", "Gfx_Target_Version", "Vendor_Id", "Device_Id",
              "Location_Id", "Domain", "Drm_Render_Minor", "Num_Sdma_Engines",
              "Num_Sdma_Xgmi_Engines", "Num_Sdma_Queues_Per_Engine", "Num_Cp_Queues",
              "Max_Engine_Clk_Ccompute", "Max_Engine_Clk_Fcompute", "Sdma_Fw_Version",
              "Fw_Version", "Capability", "Cu_Per_Engine", "Max_Waves_Per_Cu", "Family_Id",
              "Workgroup_Max_Size", "Grid_Max_Size", "Local_Mem_Size", "Hive_Id", "Gpu_Id",
              "Workgroup_Max_Dim_X", "Workgroup_Max_Dim_Y", "Workgroup_Max_Dim_Z",
              "Grid_Max_Dim_X", "Grid_Max_Dim_Y", "Grid_Max_Dim_Z", "Name", "Vendor_Name",
              "Product_Name", "Model_Name"]


def agent_info(data, cfg, node):
    """csv.cpp write_agent_info_csv: one file, rewritten per process (csv_output_file), every
    value but Guid and Agent_Type from the agent_info JSON the writer put in extdata."""
    rows = _rows(data, "rocpd_info_agent", f"WHERE guid = '{node['guid']}' AND nid = {node['id']}")
    if not rows:
        return
    stem = f"{cfg.output_file}_agent_info.csv" if cfg.output_file else "agent_info.csv"
    os.makedirs(cfg.output_path, exist_ok=True)
    with open(os.path.join(cfg.output_path, stem), "w") as fh:
        fh.write(",".join(_q(h) for h in AGENT_INFO) + "\n")
        for r in rows:
            info = json.loads(r["extdata"] or "{}")
            cells = [_q(r["guid"])]
            for col in AGENT_INFO[1:]:
                key = col.lower()
                if col == "Agent_Type":
                    cells.append(_q(r["type"]))
                elif key.endswith(("_dim_x", "_dim_y", "_dim_z")):
                    cells.append(info.get(key[:-2], {}).get(key[-1], 0))
                elif col in ("Name", "Vendor_Name", "Product_Name", "Model_Name"):
                    cells.append(_q(info.get(key, "")))
                else:
                    v = info.get(key, 0)
                    cells.append(v.get("Value", 0) if isinstance(v, dict) else v)
            fh.write(",".join(str(c) for c in cells) + "\n")
