"""`rocprof run --on-demand` on the GPU: a torch serving loop runs with nothing subscribed;
`rocprof ctl start --duration` windows subscribe CUPTI after CUDA is initialised (as Kineto
does) and each window's database holds only that window's kernels, a second window too
(CUPTI unsubscribed and subscribed again)."""

import subprocess
import sys
from pathlib import Path

from gpuutil import ROOT, compile_cu, env, query


def ctl(*args):
    return subprocess.run([sys.executable, "-m", "rocprof", "ctl", *args], capture_output=True,
                          text=True, env=env(), cwd=ROOT, timeout=60)


def test_windows_record_only_their_kernels(tmp_path):
    out, stop = tmp_path / "out", tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, "-m", "rocprof", "run", "--on-demand", "-d", str(out),
                             "-o", "srv", str(ROOT / "tests/gpu/workloads/torch_server.py"),
                             str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env(), cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "serving", proc.stderr.read()
        assert not list(out.rglob("*.db")), "recorded before any window"
        seen = []
        for k, seconds in ((1, "3s"), (2, "1s")):
            r = ctl("start", "--duration", seconds, str(out))
            assert r.returncode == 0, r.stderr
            db = Path(r.stdout.strip())
            assert db.name == f"srv_w{k}_results.db"
            init, end = query(db, 'SELECT init, "end" FROM rocpd_info_process')[0]
            kernels = query(db, "SELECT start, end FROM kernels")
            assert kernels, f"window {k} recorded no kernel"
            assert all(init <= s <= e <= end for s, e in kernels), (init, end, kernels[:3])
            ranges = query(db, "SELECT COALESCE(json_extract(extdata, '$.message'), name) FROM regions")
            numbers = sorted(int(n[3:]) for (n,) in ranges if n and n.startswith("req"))
            assert numbers and numbers == list(range(numbers[0], numbers[-1] + 1))
            assert query(db, "SELECT value FROM rocpd_metadata WHERE tag = "
                             "'rocprof.cupti.status'")[0][0] == "on"
            seen.append(numbers)
        assert seen[1][0] > seen[0][-1]
    finally:
        stop.touch()
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_window_memory_copy_trace_adds_copies_and_sets(nvcc, tmp_path):
    # The run traces kernels only; a window's --memory-copy-trace adds copies and sets (memsets
    # are an activity of their own, once left out by the window's option).
    exe = compile_cu(nvcc, Path(__file__).parent / "programs/copy_set_loop.cu", tmp_path / "loop")
    out, stop = tmp_path / "out", tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, "-m", "rocprof", "run", "--on-demand", "--kernel-trace",
                             "-d", str(out), "-o", "cs", "--", str(exe), str(stop)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                            cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "serving", proc.stderr.read()
        plain = ctl("start", "--duration", "1s", str(out))
        added = ctl("start", "--duration", "1s", "--memory-copy-trace", str(out))
        assert plain.returncode == 0 and added.returncode == 0, plain.stderr + added.stderr
    finally:
        stop.touch()
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    count = "SELECT name, count(*) FROM memory_copies GROUP BY name"
    assert dict(query(Path(plain.stdout.strip()), count)) == {}
    rows = dict(query(Path(added.stdout.strip()), count))
    assert rows.get("MEMORY_SET", 0) > 0 and rows.get("MEMORY_COPY_HOST_TO_DEVICE", 0) > 0, rows
