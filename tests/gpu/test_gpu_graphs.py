"""Kernels of CUDA graph replays carry their graph and node ids and the user's line where the
graph was captured (CUPTI's graph-node resource callbacks, capture/cupti/graphs.*), and a
torch.compile(mode="reduce-overhead") model's kernels name the user's line, not inductor's
generated file (the site filter, rocprof/capture/site_filter.py)."""

import json
import os

import pytest
from gpuutil import ROOT, query, rocprof_run

from rocpd import _schema

WORKLOAD = ROOT / "tests/gpu/workloads/graph_replay.py"
STEPS = 20


def _line(marker):
    return next(i for i, t in enumerate(open(WORKLOAD), 1) if t.rstrip().endswith(marker))


def _kernels(db):
    """(name, extdata, line_info) of every kernel dispatch."""
    rows = query(db, f"SELECT S.display_name, K.extdata, {_schema.line_info_sql('E')} "
                     "FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON E.id = K.event_id "
                     "JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id")
    return [(n, json.loads(x or "{}"), json.loads(li) if li else {}) for n, x, li in rows]


def _share_at(kernels, line):
    replayed = [k for k in kernels if k[1].get("graph_id")]
    ok = [k for k in replayed if k[1].get("graph_node_id") and k[2].get("file") == str(WORKLOAD)
          and k[2].get("line") == line]
    return replayed, ok


def _misses(db, replayed, ok):
    """What the kernels without the expected line carry instead, counted (the failure message)."""
    from collections import Counter

    left = Counter((k[0][:70], bool(k[1].get("graph_node_id")), k[2].get("file", "")[-40:],
                    k[2].get("line")) for k in replayed if k not in ok)
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata WHERE tag LIKE 'rocprof.cupti.%'"))
    return left.most_common(8), meta


def test_graph_replay_kernels_carry_ids_and_the_capture_line(tmp_path):
    db, p = rocprof_run(tmp_path, str(WORKLOAD), "--mode", "graph", "--steps", str(STEPS))
    replayed, ok = _share_at(_kernels(db), _line("# CAPTURE_LINE"))
    assert len(replayed) >= STEPS, f"{len(replayed)} graph kernels\n{p.stderr}"
    share = len(ok) / len(replayed)
    print(f"graph replay: {len(ok)}/{len(replayed)} kernels with ids and the capture line ({share:.1%})")
    assert share >= 0.95, (_misses(db, replayed, ok), p.stderr)
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata WHERE tag = 'rocprof.cupti.graphs'"))
    assert "kernels=" in meta.get("rocprof.cupti.graphs", ""), meta


def test_graph_trace_graph_records_one_span_per_replay(tmp_path):
    db, p = rocprof_run(tmp_path, "--graph-trace", "graph", str(WORKLOAD), "--mode", "graph",
                        "--steps", str(STEPS))
    spans = [k for k in _kernels(db) if k[0].startswith("CUDA graph ")]
    assert len(spans) == STEPS, (len(spans), p.stderr)
    assert all(k[1].get("graph_id") and not k[1].get("graph_node_id") for k in spans)
    assert all(k[2].get("line") == _line("# REPLAY_LINE") for k in spans), spans[:3]


def test_compiled_reduce_overhead_names_the_users_line(tmp_path):
    if os.environ.get("ROCPROF_SKIP_COMPILE"):
        pytest.skip("ROCPROF_SKIP_COMPILE set")
    pytest.importorskip("triton", reason="torch.compile needs triton on the GPU host")
    db, p = rocprof_run(tmp_path, str(WORKLOAD), "--mode", "compiled", "--steps", str(STEPS))
    kernels = _kernels(db)
    replayed, ok = _share_at(kernels, _line("# COMPILED_LINE"))
    assert replayed, f"no graph kernels: cudagraph trees did not replay\n{p.stderr}"
    share = len(ok) / len(replayed)
    print(f"compiled: {len(ok)}/{len(replayed)} replayed kernels with ids and the user's line "
          f"({share:.1%}); {len(kernels)} kernels in all")
    assert share >= 0.95, (_misses(db, replayed, ok), p.stderr)
    generated = [k for k in kernels if "torchinductor_" in k[2].get("file", "")]
    assert not generated, generated[:3]
