"""Backward kernels named by their forward op (line_info ``"backward_of"``, written by
rocprof._torch_observer) are listed under their forward op's line with a "(backward)" marker:
a line's backward work is a row of its own in the top lines (and so in the findings, the report
and `rocpd diff`, which group by the same site)."""

import analysis_patterns as P

import rocpd
from rocpd.analysis import analyze, sites
from rocpd.testing import DatabaseBuilder

FWD = ("/w/proj/model.py", 12, "forward")
BWD = ("/w/proj/model.py", 12, "forward", "aten::mm")


def test_a_backward_site_is_its_forward_line_marked_backward():
    assert sites._parse_site('{"file":"/w/m.py","line":12,"function":"f"}') == ("/w/m.py:12", "f")
    assert sites._parse_site('{"file":"/w/m.py","line":12,"function":"f","backward_of":"aten::mm"}') \
        == ("/w/m.py:12 (backward)", "f")
    assert sites.short_site("/w/m.py:12 (backward)") == "m.py:12 (backward)"


def test_top_lines_list_a_lines_backward_work_apart(tmp_path):
    db = tmp_path / "bw.db"
    with DatabaseBuilder(db) as b:
        for s in range(3):
            at = s * 1000.0
            b.marker("step", P.ns(at), P.ns(at + 900))
            P.launch(b, "gemm_fwd", at + 5, 5, at + 20, 100, site=FWD)
            # autograd's device thread: a thread of its own
            P.launch(b, "gemm_bwd_a", at + 200, 5, at + 210, 150, site=BWD, tid=4242)
            P.launch(b, "gemm_bwd_b", at + 220, 5, at + 370, 50, site=BWD, tid=4242)
    with rocpd.connect(db) as con:
        lines = analyze(con).lines
    got = {r.Site: (r.GpuTimeNs, r.Kernels, r.TopKernel) for r in lines.itertuples()}
    assert got == {"model.py:12 (backward)": (600_000, 2, "gemm_bwd_a"),
                   "model.py:12": (300_000, 1, "gemm_fwd")}, got
    assert list(lines["Path"]) == ["/w/proj/model.py:12 (backward)", "/w/proj/model.py:12"]

