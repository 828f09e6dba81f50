"""The findings about a GPU waiting for its host are computed over the steps (start-up apart) and
name the host work that delayed the next launch, not the wait before it: the same top finding
from the default trace and from --sys-trace (host_patterns.py writes each loop both ways, the
second as CUPTI records it)."""

import host_patterns as H
import pytest

import rocpd
from rocpd import analysis


def analysed(path, **kw):
    with rocpd.connect(str(path)) as db:
        a = analysis.analyze(db, **kw)
        return a, a.findings()


def top(fs):
    """The first finding that is not a caveat about the trace itself."""
    return next(f for f in fs if f.level != "caveat")


def rules(fs):
    return [f.rule for f in fs]


@pytest.mark.parametrize("pattern, kw, expected", [
    (H.slow_loader, {}, "idle-between-steps"),
    (H.sync_in_step, {}, "launch-bound"),
    (H.sync_in_step, {"kernel_us": 40.0}, "host-bound"),
    (H.startup, {}, "launch-bound"),
])
def test_same_top_finding_with_and_without_sys_trace(tmp_path, pattern, kw, expected):
    _, default = analysed(pattern(tmp_path / "default.db", api=False, **kw))
    _, sys_trace = analysed(pattern(tmp_path / "sys.db", api=True, **kw))
    assert top(default).rule == expected, [f.title for f in default]
    assert top(sys_trace).rule == expected, [f.title for f in sys_trace]
    assert top(default).score == pytest.approx(top(sys_trace).score, rel=0.02)


def test_slow_loader_under_sys_trace_blames_the_loader_not_the_sync(tmp_path):
    """The issue's H100 case: the host sleeps in its data loader between steps; each step ends in
    loss.item(). Before, the gap after .item() and the start-up gap after model creation were
    charged to the waits ("a device synchronisation follows 1 of every 9.9 launches (model.py:12);
    the GPU idles 95 % waiting for the host after it") and the between-steps finding vanished."""
    a, fs = analysed(H.slow_loader(tmp_path / "s.db", api=True))
    assert not {"sync-after-launch", "copy-to-host", "host-bound"} & set(rules(fs)), rules(fs)
    f = top(fs)
    assert f.rule == "idle-between-steps" and fs[0] is f and f.severity == "high"
    assert f.score > 0.9
    text = "\n".join(f.evidence)
    assert "the host resumed launching at train.py:30" in text
    assert "follows a wait (cudaStreamSynchronize (train.py:33))" in text
    assert "sample it (rocprof run --sample)" in text  # not recorded: said so
    # the gap's window on the host starts at the wait's return, not at the GPU's idle start
    gaps = a.gaps[0]
    between = gaps[(gaps["step"] < 0) & (gaps["after_call"] >= 0)]
    assert len(between) and (between["host_from"] >= between["start"]).all()
    assert (between["cause"] == "HostLateNs").all()
    # start-up is reported apart, after the issues
    su = next(x for x in fs if x.rule == "startup")
    assert su.level == "info" and fs.index(su) > fs.index(f)
    assert set(a.parts["part"]) == {"startup", "steps"}


def test_slow_loader_sampled_names_the_loader_line(tmp_path):
    _, fs = analysed(H.slow_loader(tmp_path / "s.db", api=True, samples=True))
    f = top(fs)
    assert f.rule == "idle-between-steps"
    assert f.title.endswith("the host is in data.py:8 (load) (sampled)"), f.title
    assert f.sites == ["/w/data.py:8"]
    assert any(e.startswith("sampled (100 samples in it): data.py:8 in load 100 %") for e in f.evidence)
    # the default trace with the same samples: the same line
    _, fs2 = analysed(H.slow_loader(tmp_path / "d.db", api=False, samples=True))
    assert top(fs2).title == f.title


def test_a_roctx_range_names_the_host_work(tmp_path):
    """The loop with its loader wrapped in roctx.range("data")."""
    path2 = tmp_path / "r2.db"
    from rocpd.testing import DatabaseBuilder

    with DatabaseBuilder(path2) as b:
        t = H.Trace(b, api=True)
        now = 0.0
        for _ in range(4):
            b.marker("data", H.ns(now), H.ns(now + 20_000))
            now += 20_000
            start = now
            for _k in range(10):
                t.launch("gemm_kernel", now, now + 10, 5, "forward")
                now += 8
            now = H._item(t, now, now + 10)
            b.marker("step", H.ns(start), H.ns(now + 3))
            now += 10
    a, fs = analysed(path2, step="step")
    f = top(fs)
    assert f.rule == "idle-between-steps" and "inside ROCTx range 'data'" in f.title, f.title


def test_sync_in_step_names_the_sync_and_its_line_when_traced(tmp_path):
    _, fs = analysed(H.sync_in_step(tmp_path / "s.db", api=True))
    f = top(fs)
    assert f.rule == "launch-bound" and fs[0] is f
    assert "a device synchronisation follows 1 of every 1.0 kernel launches (train.py:42)" in f.title
    assert f.sites[0] == "/w/train.py:42"
    assert f.suggestion.startswith("remove torch.cuda.synchronize()")
    assert "sync-after-launch" not in rules(fs)  # one finding for one cause
    _, fs2 = analysed(H.sync_in_step(tmp_path / "d.db", api=False))
    assert "--sys-trace" in top(fs2).suggestion  # the default trace says how to see the cause


def test_start_up_is_reported_apart_and_its_waits_are_not_findings(tmp_path):
    a, fs = analysed(H.startup(tmp_path / "s.db", api=True))
    assert not {"sync-after-launch", "idle-between-steps", "copy-to-host"} & set(rules(fs))
    su = next(f for f in fs if f.rule == "startup")
    assert su.title.startswith("start-up: 41.210 ms before the first step (97 %")
    parts = a.parts.set_index("part")
    # model creation: 4 uploads of 270 µs from 10 µs to 1180 µs; the first step's first kernel
    # runs at 41210 + 12 µs
    assert parts.loc["startup", "SpanNs"] == (41_222 - 10) * 1000
    assert parts.loc["startup", "Copies"] == 4 and parts.loc["steps", "Copies"] == 0
    assert parts.loc["steps", "Kernels"] == 100
    # the whole-run tables still show everything
    assert a.idle.iloc[0]["IdleNs"] > parts.loc["steps", "IdleNs"]
    _, fs2 = analysed(H.startup(tmp_path / "d.db", api=False))
    assert next(f for f in fs2 if f.rule == "startup").title == su.title.replace("41.210", "41.200")
