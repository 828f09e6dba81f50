"""Backward ops named by the forward op they differentiate (rocprof._torch_observer, over
PyTorch's RecordFunction and autograd sequence numbers), on real CPU PyTorch. CPU ops launch no
kernels, so each op's entry in the observer's test log carries what a kernel launched inside it
on a thread without Python frames would get (_core's frameless_site: the path of autograd's
device threads), resolved to its site JSON the way a kernel record's is."""

import json
import os
import subprocess
import sys
import threading

import pytest
from rocprof import _core

torch = pytest.importorskip("torch")
nn = torch.nn


@pytest.fixture
def observer(launch_sites_started):
    from rocprof.capture import autograd_sites

    why = autograd_sites.observer_unavailable()
    if why:
        pytest.skip(why)
    autograd_sites.install()  # as GPU tracing does: backward() lends its line, observer attached
    obs = autograd_sites.attach_observer()
    assert obs is not None and obs.stats()["on"]
    return obs


def _line(marker):
    return next(i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith(marker))


def _site(key):
    """The site (first frame) a launch with this key carries, or None."""
    text = _core._launch_site_json(key) if key else ""
    return json.loads(text)[0] if text else None


def _op_sites(obs, fn, kind="B"):
    """[(op, its sequence number, the site its launches get)] of the backward ops (kind "B") or
    of every other op (aten's, "F") run while fn() runs."""
    obs._debug_start(1 << 16)
    try:
        fn()  # LINE_BACKWARD_CALL
    finally:
        log = obs._debug_stop()
    return [(name, seq, _site(key)) for k, name, seq, key in log if k == kind]


def _backward_sites(obs, fn):
    return _op_sites(obs, fn, "B")


def test_each_backward_op_names_its_forward_ops_line_and_name(observer):
    x = torch.randn(8, 16, requires_grad=True)
    w = torch.randn(16, 4, requires_grad=True)
    h = x @ w  # LINE_MM
    r = torch.relu(h)  # LINE_RELU
    loss = (r * 2.0).sum()  # LINE_LOSS
    got = {name: site for name, seq, site in _backward_sites(observer, loss.backward) if seq >= 0}
    expect = {"MmBackward0": ("# LINE_MM", "aten::mm"), "ReluBackward0": ("# LINE_RELU", "aten::relu"),
              "MulBackward0": ("# LINE_LOSS", "aten::mul"), "SumBackward0": ("# LINE_LOSS", "aten::sum")}
    for node, (marker, op) in expect.items():
        site = got[node]
        assert site is not None, (node, got)
        assert (site["file"], site["line"], site["backward_of"]) == (__file__, _line(marker), op), site
        assert site["function"] == "test_each_backward_op_names_its_forward_ops_line_and_name"
    # AccumulateGrad (made for a leaf, not by a forward op) has no number: its work is the
    # gradient's producer's, which the engine runs just before it.
    acc = [s for name, seq, s in _backward_sites(observer, lambda: (x @ w).sum().backward())
           if name.endswith("AccumulateGrad")]
    assert acc and all(s["backward_of"] in ("aten::mm", "aten::sum") for s in acc), acc


def test_the_calling_threads_backward_site_ends_with_its_backward_call(observer):
    """On the CPU the calling thread runs the backward ops itself; once backward() returns, what
    it launches is no longer theirs."""
    x = torch.ones(3, requires_grad=True)
    loss = (x * 2.0).sum()
    during = _op_sites(observer, loss.backward, "F")
    assert any(s and s.get("backward_of") for _, _, s in during), during
    after = _op_sites(observer, lambda: torch.zeros(2) + 1, "F")
    assert after and all(s is None for _, _, s in after), after


def _encoder_step(layer, x):
    return layer(x).square().mean()  # LINE_ENCODER


def _names_the_encoder_line(site):
    return bool(site and site.get("backward_of") and site["file"] == __file__
                and site["line"] == _line("# LINE_ENCODER"))


def test_nine_in_ten_backward_ops_of_a_transformer_name_their_forward_op(observer):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True)
    x = torch.randn(4, 16, 64)
    loss = _encoder_step(layer, x)
    entries = _backward_sites(observer, loss.backward)
    with_seq = [(n, s) for n, seq, s in entries if seq >= 0]
    linked = [(n, s) for n, s in with_seq if _names_the_encoder_line(s)]
    assert len(with_seq) >= 20, entries
    assert len(linked) >= 0.9 * len(with_seq), [n for n, s in with_seq if (n, s) not in linked]
    ops = {s["backward_of"] for _, s in linked}
    assert {"aten::addmm", "aten::native_layer_norm", "aten::relu"} <= ops, ops
    st = observer.stats()
    assert st["linked"] >= len(linked) and st["not_found"] == 0, st


def test_the_engines_work_between_backward_ops_keeps_the_last_ops_site(observer):
    """What a GPU backward pass launches is nearly all aten ops run by the engine: inside the
    backward ops, and between them (gradients reduced to their inputs' shapes, accumulated into
    the next node's input, AccumulateGrad's). On the CPU each such op stands for its kernels."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True, norm_first=True)
    loss = _encoder_step(layer, torch.randn(4, 16, 64))
    ops = _op_sites(observer, loss.backward, "F")
    # The root gradient (ones_like) is made by backward()'s caller before any backward op; on a
    # GPU it is launched from Python, with the backward() call's line.
    named = [n for n, seq, s in ops if _names_the_encoder_line(s)]
    assert len(ops) >= 100 and len(named) >= 0.95 * len(ops), [n for n, seq, s in ops
                                                                 if not _names_the_encoder_line(s)]
    assert "aten::add_" in named or "aten::add" in named  # accumulation into an input buffer


def test_forward_threads_with_the_same_sequence_numbers_stay_apart(observer):
    """Sequence numbers count per thread: two threads' forward ops share them, and each backward
    op finds its own thread's op (the RecordFunction thread id is part of the key)."""
    out = {}

    def forward_a():
        xa = torch.ones(4, requires_grad=True)
        out["a"] = (xa * 3.0).sum()  # LINE_THREAD_A

    def forward_b():
        xb = torch.ones(4, requires_grad=True)
        out["b"] = (xb * 5.0).sum()  # LINE_THREAD_B

    for fn in (forward_a, forward_b):  # fresh threads: both count from the same number
        t = threading.Thread(target=fn)
        t.start()
        t.join()
    total = out["a"] + out["b"]
    entries = _backward_sites(observer, total.backward)
    mul_lines = sorted(s["line"] for n, seq, s in entries if n == "MulBackward0" and s)
    assert mul_lines == sorted([_line("# LINE_THREAD_A"), _line("# LINE_THREAD_B")]), entries
    funcs = {s["function"].rsplit(".", 1)[-1] for n, seq, s in entries if n == "MulBackward0"}
    assert funcs == {"forward_a", "forward_b"}


def test_no_grad_and_a_stopped_session_remember_nothing(observer, launch_sites_started):
    x = torch.ones(4, requires_grad=True)
    before = observer.stats()["forward_ops"]
    with torch.no_grad():
        (x * 2).sum()
    assert observer.stats()["forward_ops"] == before  # no node can take their numbers
    y = (x * 2).sum()
    assert observer.stats()["forward_ops"] > before
    # A new session: the last one's keys are forgotten (they name its string table).
    _core._launch_sites_stop()
    assert not observer.stats()["on"]
    stopped = observer.stats()["forward_ops"]
    (x * 3).sum()
    assert observer.stats()["forward_ops"] == stopped  # callbacks removed with the session
    _core._launch_sites_start()
    assert observer.stats()["on"]
    entries = _backward_sites(observer, y.backward)
    # Not found: their work keeps the line of the backward() call (lent while it runs).
    lent = [(s["line"], "backward_of" in s) for n, seq, s in entries if seq >= 0]
    assert lent == [(_line("# LINE_BACKWARD_CALL"), False)] * 2, entries
    st = observer.stats()
    assert st["not_found"] == 2 and st["linked"] == 0, st


def test_ops_nested_in_one_python_call_keep_their_own_names(observer):
    """aten::linear runs aten::t and aten::addmm inside it, all three seeing the same Python
    frames (the thread's frames are keyed once for them): each backward op still names its own
    forward op, on the line that called linear()."""
    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(3, 8, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    for _ in range(2):  # the second pass finds every chain already known
        loss = nn.functional.linear(x, w, b).sum()  # LINE_LINEAR
        got = {name: site for name, seq, site in _backward_sites(observer, loss.backward)
               if seq >= 0}
        assert got["AddmmBackward0"]["backward_of"] == "aten::addmm", got
        assert got["TBackward0"]["backward_of"] == "aten::t", got
        assert {s["line"] for s in got.values()} == {_line("# LINE_LINEAR")}, got


def test_a_new_session_names_backward_ops_again(observer):
    """A chain known on this thread in one session is keyed afresh in the next (its site is
    interned in the new session's string table): the same line's backward ops name it."""
    x = torch.ones(4, requires_grad=True)

    def step():
        loss = (x * 2.0).sum()  # LINE_SESSIONS
        return [(n, s) for n, seq, s in _backward_sites(observer, loss.backward) if seq >= 0]

    for _ in range(3):
        for _ in range(3):  # resolved after the first: known to this thread from the second on
            got = step()
            assert {(n, s and s["line"], s and s["backward_of"]) for n, s in got} == {
                ("MulBackward0", _line("# LINE_SESSIONS"), "aten::mul"),
                ("SumBackward0", _line("# LINE_SESSIONS"), "aten::sum")}, got
        _core._launch_sites_stop()
        _core._launch_sites_start()
        assert observer.stats()["on"]


def test_the_floor_callback_is_added_and_removed(observer):
    """The benchmarks' empty callback (PyTorch's own cost of observing every op) leaves the
    observer's links as they were."""
    from rocprof import _torch_observer

    _torch_observer._floor_callback(True)
    try:
        x = torch.ones(4, requires_grad=True)
        loss = (x * 2.0).sum()  # LINE_FLOOR
        got = [s for n, seq, s in _backward_sites(observer, loss.backward) if seq >= 0]
        assert got and all(s["line"] == _line("# LINE_FLOOR") for s in got), got
    finally:
        _torch_observer._floor_callback(False)
    _torch_observer._floor_callback(False)  # twice: harmless


def test_the_ring_keeps_the_last_forward_ops_only(observer):
    """Memory is bounded: past RING_SLOTS forward ops before their backward, the oldest ops'
    backward ops find none (counted), the newer ones still their line."""
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(observer.RING_SLOTS + 500):
        y = y * 1.0  # LINE_CHAIN
    entries = _backward_sites(observer, y.sum().backward)
    st = observer.stats()
    assert 400 <= st["not_found"] <= 600, st
    lines = {s["line"] for n, seq, s in entries if n == "MulBackward0" and s}
    assert lines == {_line("# LINE_CHAIN")}
    assert st["linked"] >= observer.RING_SLOTS - 100, st


def test_attached_when_the_program_imports_torch(tmp_path):
    """The import hook (rocprof.capture.autograd_sites, installed with GPU tracing) attaches the
    observer as torch is being imported, and it is on while launch sites run."""
    from support import ROOT

    if _core.torch_observer_build()["torch"] == "":
        pytest.skip(f"the torch observer is not built: {_core.torch_observer_build()['reason']}")
    code = (
        "import json, sys\n"
        "from rocprof import _core\n"
        "from rocprof.capture import autograd_sites, cupti\n"
        "_core._cupti_set_callsite_prefixes('\\n'.join(cupti.library_prefixes()))\n"
        "_core._launch_sites_start()\n"
        "autograd_sites.install()\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "from rocprof import _torch_observer as obs\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "y = (x * 2.0).sum()  # THE FORWARD LINE\n"
        "obs._debug_start(100)\n"
        "y.backward()\n"
        "keys = [k for kind, name, seq, k in obs._debug_stop() if name == 'MulBackward0']\n"
        "print(json.dumps([obs.stats()['on'], json.loads(_core._launch_site_json(keys[0]))[0]]))\n"
        "_core._launch_sites_stop()\n")
    script = tmp_path / "program.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)])})
    assert p.returncode == 0, p.stderr
    on, site = json.loads(p.stdout.splitlines()[-1])
    assert on and site["backward_of"] == "aten::mul", site
    assert (site["file"], site["line"]) == (str(script), 11), site
    assert "rocprof:" not in p.stderr, p.stderr


def test_rocprof_info_says_whether_backward_kernels_name_their_forward_op():
    from rocprof.cli import info

    state = info.torch_observer()
    built = _core.torch_observer_build()
    if built["torch"]:
        assert state["built_against"] == built["torch"] == str(torch.__version__)
        assert "backward kernels name their forward op's line" in state["line"]
    else:
        assert built["reason"] in state["line"] and "backward() call's line" in state["line"]


LIBRARY_BACKWARD = '''import threading

import torch
from rocprof import _core

seen = []


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        seen.append(_core._launch_site_here())  # what a launch here records
        return g * 2


def backward_in_a_thread(loss):
    t = threading.Thread(target=loss.backward)
    t.start()
    t.join()
'''


def test_backward_code_without_a_user_frame_takes_its_forward_ops_line(tmp_path, observer):
    """A backward op that runs Python whose frames are all library code (a torch.compile'd
    backward graph on autograd's thread): once its chain is known to name no user frame, its
    launches carry the forward op's line."""
    from rocprof.capture import cupti

    lib = tmp_path / "somelib"
    lib.mkdir()
    (lib / "double.py").write_text(LIBRARY_BACKWARD)
    sys.path.insert(0, str(tmp_path))
    _core._cupti_set_callsite_prefixes("\n".join([*cupti.library_prefixes(), str(lib)]))
    try:
        from somelib import double

        x = torch.ones(3, requires_grad=True)
        for _ in range(2):  # the first sight of the chain is resolved later, with no user frame
            double.backward_in_a_thread(double.Double.apply(x).sum())  # LINE_APPLY
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("somelib.double", None)
        sys.modules.pop("somelib", None)
        _core._cupti_set_callsite_prefixes("\n".join(cupti.library_prefixes()))
    (_, first_id, _), (key, _, text) = double.seen
    assert first_id == 0 and key != 0
    site = json.loads(text or _core._launch_site_json(key))[0]
    assert (site["line"], site["backward_of"]) == (_line("# LINE_APPLY"), "Double"), site


def test_rocprof_info_reads_torch_version_py_not_the_wheel_metadata(tmp_path, monkeypatch):
    """A torch whose dist-info says 2.11.0 while torch.__version__ is 2.11.0+cu130 (as on the
    GPU host): `rocprof info` compares the version the observer compares at run time."""
    from rocprof.cli import info

    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('not to be imported by rocprof info')\n")
    (pkg / "version.py").write_text("__version__ = '9.9.9+fake'\ncuda = None\n")
    (tmp_path / "torch-9.9.9.dist-info").mkdir()
    (tmp_path / "torch-9.9.9.dist-info" / "METADATA").write_text("Name: torch\nVersion: 9.9.9\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert info._torch_version() == "9.9.9+fake"
