"""Backward kernels name the forward op they differentiate: its Python line and op name
(line_info "backward_of", rocprof._torch_observer over PyTorch's RecordFunction and autograd
sequence numbers). Backward kernels are those launched by autograd's device thread (a thread
other than the script's). Each test prints its figures (run with -s to see them)."""

import json

import pytest
from gpuutil import ROOT, query, rocprof_run

try:
    from rocprof import _core
except ImportError:  # no build here: gpuutil's probe already skips this folder
    _core = None

needs_observer = pytest.mark.skipif(
    _core is None or not _core.torch_observer_build()["torch"],
    reason="rocprof._torch_observer is not built: "
           + (_core.torch_observer_build()["reason"] if _core is not None else "no build"))

MODEL = """import torch
torch.manual_seed(0)
w1 = torch.randn(1024, 2048, device="cuda", requires_grad=True)
w2 = torch.randn(2048, 256, device="cuda", requires_grad=True)
x = torch.randn(512, 1024, device="cuda")
for _ in range(5):
    h = x @ w1  # line 7
    a = torch.relu(h)  # line 8
    loss = (a @ w2).square().mean()  # line 9
    loss.backward()  # line 10
torch.cuda.synchronize()
"""


def _backward_kernels(db):
    """[(kernel name, line_info dict)] of the kernels launched off the script's own thread."""
    from rocpd import _schema

    rows = query(db, f"SELECT K.name, {_schema.line_info_sql('E')} FROM kernels K "
                     "JOIN rocpd_kernel_dispatch D ON D.id = K.id AND D.guid = K.guid "
                     "JOIN rocpd_event E ON E.id = D.event_id AND E.guid = D.guid "
                     "WHERE K.tid != K.pid")
    return [(name, json.loads(li) if li else {}) for name, li in rows]


def _links(db):
    meta = dict(query(db, "SELECT tag, value FROM rocpd_metadata"))
    text = meta.get("rocprof.torch.backward_links", "")
    return dict(kv.split("=") for kv in text.split(",") if "=" in kv)


@needs_observer
def test_backward_kernels_carry_their_forward_ops_line_and_name(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(MODEL)
    db, p = rocprof_run(tmp_path, str(script))
    back = _backward_kernels(db)
    named = [(n, li) for n, li in back if li.get("backward_of") and li.get("file") == str(script)]
    print(f"\nsmall model: {len(named)} of {len(back)} backward kernels name their forward op; "
          f"links {_links(db)}")
    assert len(back) >= 10, p.stderr
    assert len(named) >= 0.9 * len(back), [(n, li) for n, li in back if (n, li) not in named]
    pairs = {(li["line"], li["backward_of"]) for _, li in named}
    assert {(7, "aten::mm"), (8, "aten::relu"), (9, "aten::mm")} <= pairs, pairs
    links = _links(db)
    assert int(links["linked"]) > 0 and links["not_found"] == "0", links
    # rocpd: the line's backward work is a row of its own in the top lines.
    import rocpd
    from rocpd.analysis import analyze

    with rocpd.connect(db) as con:
        sites = set(analyze(con, step="").lines["Site"])
    assert {"model.py:7 (backward)", "model.py:8 (backward)", "model.py:7"} <= sites, sites


@needs_observer
def test_nine_in_ten_backward_kernels_of_a_transformer_name_their_forward_op(tmp_path):
    workload = ROOT / "tests/gpu/workloads/torch_steps.py"
    db, p = rocprof_run(tmp_path, str(workload), "--model", "transformer", "--steps", "10",
                        "--warmup", "3")
    back = _backward_kernels(db)
    named = [(n, li) for n, li in back if li.get("backward_of")]
    ops = sorted({li["backward_of"] for _, li in named})
    print(f"\ntransformer: {len(named)} of {len(back)} backward kernels "
          f"({100 * len(named) / max(len(back), 1):.1f} %) name their forward op; ops {ops}; "
          f"links {_links(db)}")
    assert len(back) >= 100, p.stderr
    assert len(named) >= 0.9 * len(back), [n for n, li in back if not li.get("backward_of")][:20]
    assert all(li["file"] == str(workload) for _, li in named), {li["file"] for _, li in named}
    assert "aten::addmm" in ops or "aten::linear" in ops or "aten::mm" in ops, ops
