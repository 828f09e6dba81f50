"""The NCCL profiler plugin (librocprof_nccl.so) driven by a test-only stand-in of NCCL
(tests/standins/nccl_standin.c: no NCCL and no GPU here) that loads it from NCCL_PROFILER_PLUGIN
and calls the profiler interface as NCCL 2.27 (v4) and >= 2.28 (v5) do, through the real
launcher (`rocprof run --rccl-trace -- CMD`), core and writer: every call in the database with
its size, datatype, communicator, root/peer, rank, stream; the summary's section."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from support import ROOT, _env, open_db, run_rocprof

# What the stand-in calls (its header comment): (function, count, bytes, datatype, root, peer)
CALLS = [("ncclAllReduce", 262144, 1 << 20, "ncclFloat32", None, None),
         ("ncclAllReduce", 1024, 2048, "ncclBfloat16", None, None),
         ("ncclBroadcast", 4096, 32768, "ncclInt64", 1, None),
         ("ncclAllGather", 1000, 2000, "ncclFloat16", None, None),
         ("ncclSend", 256, 256, "ncclUint8", None, 2)]
RANK, NRANKS = 1, 4


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on PATH to build the test-only NCCL stand-in")
    out = tmp_path_factory.mktemp("nccl") / "nccl_standin"
    subprocess.run([cc, "-O1", "-Wall", "-Werror", f"-I{ROOT / 'cpp/capture/nccl'}", "-o", str(out),
                    str(ROOT / "tests/standins/nccl_standin.c"), "-ldl"], check=True)
    assert (ROOT / "python/rocprof/librocprof_nccl.so").exists(), "the plugin is part of every build"
    return str(out)


def record(tmp_path, standin, version, *flags):
    r = run_rocprof("run", "-d", tmp_path, "-o", "n", *flags, "--", standin, version, RANK, NRANKS)
    return r, tmp_path / "n_results.db"


def calls(db):
    with open_db(db) as c:
        rows = c.execute(
            "SELECT R.id, S.string, R.start, R.\"end\" FROM rocpd_region R JOIN rocpd_event E ON"
            " E.id = R.event_id AND E.guid = R.guid JOIN rocpd_string C ON C.id = E.category_id"
            " JOIN rocpd_string S ON S.id = R.name_id WHERE C.string = 'RCCL_API' ORDER BY R.start"
        ).fetchall()
        out = []
        for rid, name, start, end in rows:
            args = dict(c.execute("SELECT A.name, A.value FROM rocpd_arg A JOIN rocpd_region R ON"
                                  " R.event_id = A.event_id WHERE R.id = ?", (rid,)))
            out.append((name, start, end, args))
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    return out, meta


@pytest.mark.parametrize("version", ["v5", "v4"])
def test_calls_recorded_with_their_sizes(tmp_path, standin, version):
    r, db = record(tmp_path, standin, version, "--rccl-trace")
    assert r.returncode == 0, r.stderr
    got, meta = calls(db)
    assert [g[0] for g in got] == [c[0] for c in CALLS]
    for (name, start, end, a), (_, count, nbytes, dtype, root, peer) in zip(got, CALLS, strict=True):
        assert 0 < start < end
        assert a["count"] == str(count) and a["bytes"] == str(nbytes) and a["datatype"] == dtype
        assert a["rank"] == str(RANK) and a["nranks"] == str(NRANKS) and a["nnodes"] == "1"
        assert a["comm"] == "0x0000000000c0ffee" and a["comm_name"] == "standin-comm"
        assert a.get("root") == (None if root is None else str(root))
        assert a.get("peer") == (None if peer is None else str(peer))
        if name != "ncclSend":
            assert a["algo"] == "Ring" and a["proto"] == "Simple" and a["nchannels"] == "4"
        # v5's API events carry the stream; v4 has none (left out, never made up)
        assert a.get("stream") == (f"0x{0x5000 + RANK:016x}" if version == "v5" else None)
    assert a["nchannels"] == "4"  # the send's channels come from its task event
    assert [g[3].get("seq") for g in got[:4]] == ["0", "1", "0", "0"]
    assert meta["rocprof.nccl.plugin"].startswith(f"ncclProfiler_{version}")


def test_v5_call_spans_to_its_group_end(tmp_path, standin):
    """v5: a call's record runs from its API event's start to its group's end (where NCCL
    launches the kernel: 100 µs + 300 µs in the stand-in), not just the API event (100 µs);
    the two calls of one group end together."""
    r, db = record(tmp_path, standin, "v5", "--nccl-trace")
    assert r.returncode == 0, r.stderr
    got, _ = calls(db)
    assert all(end - start >= 400_000 for _, start, end, _ in got)
    assert got[1][2] == got[2][2] and got[0][2] < got[1][1]


def test_plugin_named_only_when_asked(tmp_path, standin):
    r, db = record(tmp_path, standin, "v5")
    assert r.returncode == 3 and "NCCL_PROFILER_PLUGIN is not set" in r.stderr


def test_summary_shows_bandwidth_table(tmp_path, standin):
    r, db = record(tmp_path, standin, "v5", "--rccl-trace")
    assert r.returncode == 0, r.stderr
    out = subprocess.run([sys.executable, "-m", "rocpd", "summary", str(db)], capture_output=True,
                         text=True, env=_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "== COLLECTIVES ==" in out.stdout and "AllReduce" in out.stdout
    assert "Broadcast" in out.stdout and "call" in out.stdout  # no kernels: the call's time


def test_no_plugin_loaded_is_said(tmp_path):
    """--rccl-trace where NCCL never loads the plugin (here: no NCCL at all; on a GPU host: NCCL
    older than 2.27): the summary says collectives are in the kernels only."""
    from support import WORKLOADS

    r = run_rocprof("run", "-d", tmp_path, "-o", "p", "--rccl-trace", WORKLOADS / "ranges_and_marks.py")
    assert r.returncode == 0, r.stderr
    out = subprocess.run([sys.executable, "-m", "rocpd", "summary", str(tmp_path / "p_results.db")],
                         capture_output=True, text=True, env=_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "== COLLECTIVES ==" in out.stdout and "never loaded the profiler plugin" in out.stdout
    assert "collectives are in the kernels only" in out.stdout


def test_plugin_joins_a_running_python_session(tmp_path):
    """A profiled Python process (a torchrun rank) whose session runs before NCCL loads the
    plugin: the plugin joins it; the start-time "not loaded" row is replaced by the interface."""
    from support import WORKLOADS

    r = run_rocprof("run", "-d", tmp_path, "-o", "py", "--rccl-trace", WORKLOADS / "nccl_in_python.py")
    assert r.returncode == 0, r.stderr
    got, meta = calls(tmp_path / "py_results.db")
    assert [(g[0], g[3]["bytes"], g[3]["comm"], g[3]["stream"]) for g in got] == [
        ("ncclAllReduce", "4096", "0x000000000000beef", "0x0000000000000077")]
    assert meta["rocprof.nccl.plugin"].startswith("ncclProfiler_v5")


def test_python_session_says_not_loaded_in_metadata(tmp_path):
    from support import WORKLOADS

    r = run_rocprof("run", "-d", tmp_path, "-o", "q", "--rccl-trace", WORKLOADS / "ranges_and_marks.py")
    assert r.returncode == 0, r.stderr
    _, meta = calls(tmp_path / "q_results.db")
    assert meta["rocprof.nccl.plugin"].startswith("not loaded") and "kernels only" in meta[
        "rocprof.nccl.plugin"]


@pytest.mark.parametrize("flag", ["--sys-trace", "--runtime-trace"])
def test_sys_and_runtime_trace_include_the_collectives(tmp_path, standin, flag):
    """As rocprofv3's: the nccl backend's child environment names the plugin for the command."""
    r, db = record(tmp_path, standin, "v5", flag)
    assert r.returncode == 0, r.stderr
    got, meta = calls(db)
    assert [g[0] for g in got] == [c[0] for c in CALLS]
    assert meta["rocprof.nccl.plugin"].startswith("ncclProfiler_v5")


def test_kernel_trace_alone_leaves_nccl_alone(tmp_path, standin):
    """No collectives asked for: the command's environment names no plugin (the stand-in says
    so and exits 3, which the launcher passes through)."""
    r, _ = record(tmp_path, standin, "v5", "--kernel-trace")
    assert r.returncode == 3 and "NCCL_PROFILER_PLUGIN is not set" in r.stderr, r.stderr


def test_the_plugin_is_listed_as_a_backend():
    from rocprof import backends

    nccl = next(s for s in backends.statuses() if s["name"] == "nccl")
    assert nccl["compiled"] and nccl["live"], nccl
