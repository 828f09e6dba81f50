"""Each findings rule on a small database that has its pattern and on one that has not
(analysis_patterns.py builds both with the real writer)."""

import sys

import analysis_patterns as P
import pytest

import rocpd
from rocpd import analysis
from rocpd.analysis import findings as F
from rocpd.testing import DatabaseBuilder


def found(*paths, **kw):
    with rocpd.connect(*map(str, paths)) as db:
        return analysis.analyze(db, **kw).findings()


def rules(fs):
    return [f.rule for f in fs]


def one(fs, rule):
    hits = [f for f in fs if f.rule == rule]
    assert len(hits) == 1, rules(fs)
    return hits[0]


def test_launch_bound(tmp_path):
    fs = found(P.launch_bound(tmp_path / "lb.db"))
    f = one(fs, "launch-bound")
    assert fs[0] is f and f.severity == "high"
    # 4 steps x 20 kernels of 2 µs every 10 µs: step windows [+12, +204) = 192 µs, busy 40 µs
    assert f.score == pytest.approx((192 - 40) / 192)
    assert f.title.startswith("GPU idle 79 % of each step; 100 % of kernels run < 10.0 µs")
    assert "launch-bound" in f.title and "CUDA/HIP graph" in f.suggestion
    assert f.sites == ["/w/train.py:41"]
    assert "launch-bound" not in rules(found(P.gpu_bound(tmp_path / "gb.db")))


def test_host_bound(tmp_path):
    f = one(found(P.host_bound(tmp_path / "hb.db")), "host-bound")
    assert "waiting for the host" in f.title and "--sample" in f.suggestion
    fs = found(P.gpu_bound(tmp_path / "gb.db"))
    assert not {"host-bound", "launch-bound"} & set(rules(fs))


def test_sync_after_every_launch_names_its_line(tmp_path):
    """The GPU idles inside the step (host-bound: its 40 µs kernels are not short); the cause the
    API calls show is the synchronisation after every launch, named with its line."""
    fs = found(P.sync_after_launch(tmp_path / "sy.db"))
    f = one(fs, "host-bound")
    assert fs[0] is f
    assert f.title.endswith("host-bound; a device synchronisation follows 1 of every 1.0 kernel "
                            "launches (train.py:42)")
    assert f.sites[0] == "/w/train.py:42"
    assert "torch.cuda.synchronize()" in f.suggestion
    assert "launch-bound" not in rules(fs) and "sync-after-launch" not in rules(fs)
    assert "sync-after-launch" not in rules(found(P.gpu_bound(tmp_path / "gb.db")))


def test_sync_that_is_not_the_steps_main_cost(tmp_path):
    """A synchronisation after every launch that costs 18 % of the steps (under the host-bound
    threshold): its own finding. Per launch the GPU idles 30 µs after the wait inside a step
    and 80 µs between steps (the host went straight on: 71 µs): 4 x (4 x 30) + 3 x 80 = 720 µs
    of the steps part [13, 3933) µs."""
    path = tmp_path / "some.db"
    with DatabaseBuilder(path) as b:
        for s in range(4):
            at = s * 1000.0
            b.marker("step", P.ns(at), P.ns(at + 990))
            for i in range(5):
                a = at + 5 + i * 190
                P.launch(b, "gemm_kernel", a, 5, a + 8, 160, site=("/w/train.py", 41, "step"))
                P.sync(b, a + 6, 163, site=("/w/train.py", 42, "step"))  # returns at a + 169
    fs = found(path)
    f = one(fs, "sync-after-launch")
    assert f.title.startswith("a device synchronisation follows 1 of every 1.0 kernel launches "
                              "(train.py:42); the GPU idles 18 % of the steps")
    assert not {"host-bound", "launch-bound"} & set(rules(fs))


def test_sync_without_its_own_call_site_is_named_by_the_launch_before_it(tmp_path):
    path = tmp_path / "nosite.db"
    with DatabaseBuilder(path) as b:
        for i in range(10):
            a = i * 100.0
            P.launch(b, "k", a, 5, a + 8, 40, site=("/w/t.py", 7, "f"))
            P.sync(b, a + 6, 43)
    f = one(found(path), "host-bound")
    assert "(after the launch at t.py:7)" in f.title and f.sites == ["/w/t.py:7"]


def test_copy_to_host_then_host_work_is_idle_between_steps(tmp_path):
    """loss.item() at the end of each step, then the host logs for a while: the GPU idles for
    the host's work after the wait (between steps), not for the wait."""
    fs = found(P.copy_to_host(tmp_path / "d2h.db"))
    f = one(fs, "idle-between-steps")
    assert fs[0] is f
    assert any("follows a wait (cudaMemcpyAsync (train.py:55))" in e for e in f.evidence)
    assert ".item()" in f.suggestion
    assert "copy-to-host" not in rules(fs)
    assert "copy-to-host" not in rules(found(P.gpu_bound(tmp_path / "gb.db")))


def test_copy_to_host_then_straight_on_to_the_next_launch(tmp_path):
    """.item() in the middle of the step, the next launch straight after it returns: the wait
    drains the queue, and says so with its line."""
    path = tmp_path / "mid.db"
    with DatabaseBuilder(path) as b:
        for s in range(4):
            at = s * 1000.0
            b.marker("step", P.ns(at), P.ns(at + 990))
            for i in range(6):
                a = at + 2 + i * 70
                P.launch(b, "gemm_kernel", a, 5, a + 10, 40, site=("/w/train.py", 50, "step"))
                P.copy(b, "D2H", a + 8, 45, a + 50, 2, size=4, site=("/w/train.py", 55, "step"),
                       src_memory="DEVICE", dst_memory="PAGEABLE")  # returns at a + 53
    fs = found(path)
    f = one(fs, "host-bound")
    assert "a copy to the host follows 1 of every 1.0 kernel launches (train.py:55)" in f.title
    assert ".item()" in f.suggestion and f.sites == ["/w/train.py:55"]


def test_pageable_h2d_copies(tmp_path):
    f = one(found(P.h2d_copies(tmp_path / "pg.db")), "pageable-h2d")
    assert f.title == "4 host-to-device copies inside the step from pageable memory (train.py:20)"
    assert "pin_memory=True" in f.suggestion and f.sites == ["/w/train.py:20"]
    assert "pageable-h2d" not in rules(found(P.h2d_copies(tmp_path / "pn.db", src_memory="PINNED",
                                                          blocking=False)))
    # memory kinds not recorded (e.g. a ROCm trace): judged from the host blocking in the call
    g = one(found(P.h2d_copies(tmp_path / "u.db", src_memory="")), "pageable-h2d")
    assert "block the host for their whole duration" in g.title
    assert "pageable-h2d" not in rules(found(P.h2d_copies(tmp_path / "v.db", src_memory="",
                                                          blocking=False)))


def test_collectives_dominate_and_low_overlap(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "c").mkdir()
    f = one(found(*P.ranks(tmp_path / "a", comm_us=(900, 900), compute_us=(600, 600))),
            "collectives-dominate")
    assert f.title.startswith("collective kernels take 60 % of GPU time at 2 ranks; only 0 %")
    g = one(found(*P.ranks(tmp_path / "b", comm_us=(200, 200), compute_us=(800, 800))), "low-overlap")
    assert "does not overlap compute" in g.title
    hidden = found(*P.ranks(tmp_path / "c", comm_us=(300, 300), compute_us=(600, 600), overlap=True))
    assert not {"collectives-dominate", "low-overlap"} & set(rules(hidden))


def test_straggler(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    f = one(found(*P.ranks(tmp_path / "a", compute_us=(600, 800), overlap=True)), "straggler")
    assert f.title.startswith("rank 1 is a straggler: it computes 14 % longer per step")
    even = found(*P.ranks(tmp_path / "b", compute_us=(600, 610), overlap=True))
    assert "straggler" not in rules(even)


def test_idle_between_steps(tmp_path):
    path = tmp_path / "gap.db"
    with DatabaseBuilder(path) as b:
        for s in range(4):
            at = s * 1000.0
            b.marker("step", P.ns(at), P.ns(at + 300))
            for i in range(3):
                P.launch(b, "gemm", at + 1 + i * 6, 5, at + 10 + i * 100, 99)
    f = one(found(path), "idle-between-steps")
    # kernels [+10,+109) [+110,+209) [+210,+309): windows [+10,+309); between them
    # 3 x (1010 - 309) µs of the run's [10, 3309)
    assert f.score == pytest.approx(3 * 701 / 3299)
    assert "idle-between-steps" not in rules(found(P.gpu_bound(tmp_path / "gb.db")))


def test_memory_copies_dominate(tmp_path):
    path = tmp_path / "mem.db"
    with DatabaseBuilder(path) as b:
        for s in range(4):
            at = s * 500.0
            b.marker("step", P.ns(at), P.ns(at + 495))
            P.copy(b, "D2D", at + 1, 4, at + 10, 300, src_memory="DEVICE", dst_memory="DEVICE")
            P.launch(b, "gemm", at + 6, 4, at + 310, 180)
    f = one(found(path), "memory-copies")
    assert f.title.startswith("copies and memsets alone take 62 % of the GPU's time of each step")
    assert "memory-copies" not in rules(found(P.gpu_bound(tmp_path / "gb.db")))


def test_top_lines_and_caveats(tmp_path):
    fs = found(P.gpu_bound(tmp_path / "gb.db"))
    assert rules(fs) == ["top-lines"] and fs[0].severity == "info"
    assert fs[0].title == "most GPU time is launched from model.py:12 (100 %)"
    cpu = tmp_path / "cpu.db"
    with DatabaseBuilder(cpu) as b:
        b.marker("step", 10, 20)
        b.marker("step", 30, 40)
        b.metadata("rocprof.dropped_records", 12)
    fs = found(cpu)
    assert rules(fs) == ["dropped-records", "no-gpu-work"]
    assert fs[0].title.startswith("12 records were dropped") and fs[0].severity == "caveat"
    nosteps = tmp_path / "nosteps.db"
    with DatabaseBuilder(nosteps) as b:
        P.launch(b, "gemm", 0, 5, 10, 100, site=("/w/x.py", 1, "f"))
    assert "no-steps" in rules(found(nosteps))
    assert "no-steps" not in rules(found(nosteps, step=""))  # asked for no steps: no advice


def test_ranking_and_text(monkeypatch):
    from rocpd.analysis import rules

    a = F.Finding("x", "t", "s", 0.3, ["e1"])
    b = F.Finding("y", "u", "s", 0.05)
    c = F.Finding("z", "v", "s", 0.0, level="caveat")
    d = F.Finding("w", "i", "s", 0.9, level="info")
    assert (a.severity, b.severity, c.severity, d.severity) == ("high", "low", "caveat", "info")
    assert a.text() == "[high] t\n    - e1\n    → s"
    monkeypatch.setattr(rules, "RULES", [lambda _: [b, d], lambda _: [a, c]])
    assert [f.rule for f in rules.evaluate(None)] == ["z", "x", "y", "w"]  # caveats, by score, info


def test_a_rule_module_added_to_the_package_is_found(tmp_path, monkeypatch):
    """A new rule is one file: a module in rocpd/analysis/rules/ with its RULES, found with no
    list to extend elsewhere."""
    from rocpd.analysis import rules

    assert {"caveats", "launch_bound", "slow_collectives", "hot_lines"} <= {
        r.__name__ for r in rules.RULES}
    (tmp_path / "zz_new_rule.py").write_text(
        "from rocpd.analysis.findings import Finding\n\n\n"
        "def always(a):\n    return [Finding('always', 't', 's', 0.5)]\n\n\n"
        "RULES = (always,)\n")
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(tmp_path)])
    try:
        found = rules.discover()
    finally:
        sys.modules.pop(f"{rules.__name__}.zz_new_rule", None)
    assert found[:len(rules.RULES)] == rules.RULES and found[-1].__name__ == "always"
    assert [f.rule for f in found[-1](None)] == ["always"]


def test_launch_bound_from_the_gpu_side_alone(tmp_path):
    """Kernel tracing only (rocprof run's default: no API calls): many 2 µs kernels 8 µs apart
    still read as launch-bound, with the caveat that causes are judged from the GPU side; long
    gaps (the host doing something else) do not."""
    def build(path, gap_us):
        with DatabaseBuilder(path) as b:
            for s in range(4):
                at = s * (20 * (2 + gap_us) + 50.0)
                b.marker("step", P.ns(at), P.ns(at + 20 * (2 + gap_us) + 10))
                for i in range(20):
                    k = at + 5 + i * (2 + gap_us)
                    b.kernel("tiny", P.ns(k), P.ns(k + 2), site=("/w/t.py", 9, "step"))
        return path

    fs = found(build(tmp_path / "a.db", 8))
    assert rules(fs)[0] == "no-api-calls"
    f = one(fs, "launch-bound")
    assert "judged from the GPU side: median gap between kernels 8.0 µs" in " ".join(f.evidence)
    assert "launch-bound" not in rules(found(build(tmp_path / "b.db", 200)))


def test_idle_energy(tmp_path):
    from rocpd.analysis.rules.idle_energy import IDLE_SHARE
    from tests.unit.rocpd.energy.profiles import build

    # one step: 100 W for the 0.3 s before and after it and its 0.4 s sleep, 25 % of 400 J
    with rocpd.connect(build(tmp_path / "one.db", steps=1)) as db:
        (f,) = [f for f in analysis.analyze(db).findings() if f.rule == "idle-energy"]
    assert f.level == "issue" and IDLE_SHARE < f.score == pytest.approx(0.25, abs=0.03)
    assert f.title.endswith("is drawn while no kernel or copy runs")
    assert "GPU 0: counter, period 50 ms" in f.evidence[0]
    # three steps: 18 %, below the threshold
    with rocpd.connect(build(tmp_path / "three.db", steps=3)) as db:
        assert not [f for f in analysis.analyze(db).findings() if f.rule == "idle-energy"]
