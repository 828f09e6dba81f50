"""A launch's site is the user's own line: frames of torch, of other installed packages and of
torch.compile's generated files are skipped (the default filter, --site-filter to change it), and
the whole stack is kept: the library frames inside the site as its "library_frames", the callers
outward after it.

A CPU-only torch launches no kernels: the launch is rocprof._core._launch_site_here, what the CUPTI
ENTER callback records for its thread, called from inside a real torch.nn.Module's forward (torch's
own frames in between), defined in a wrapper package installed in a fake site-packages folder and
called by an inductor-like generated module under a torchinductor_<user> folder."""

import importlib.util
import json
import subprocess
import sys

import pytest
from rocprof import _core
from rocprof.capture import site_filter

pytestmark = pytest.mark.skipif(not hasattr(_core, "_launch_site_here"),
                                reason="built without the CUPTI backend (launch sites are its)")

WRAPPER = """\
import torch
from rocprof import _core


class Scale(torch.nn.Module):
    def forward(self, x):
        y = torch.mul(x, 2.0)
        return y, _core._launch_site_here()
"""

GENERATED = """\
import torch


def call(module, args):
    (arg0_1,) = args
    buf0 = module(arg0_1)
    return buf0
"""

USER = """\
import torch


def step(runner, module):
    x = torch.ones(4)
    out, site = runner.call(module, (x,))
    return site
"""


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def program(tmp_path):
    pytest.importorskip("torch")
    pkgs = tmp_path / "env" / "lib" / "python3" / "site-packages"
    gen = tmp_path / "cache" / "torchinductor_tester" / "xy"
    work = tmp_path / "work"
    for d in (pkgs, gen, work):
        d.mkdir(parents=True)
    (pkgs / "wrapmod.py").write_text(WRAPPER)
    (gen / "cxyz2abc.py").write_text(GENERATED)
    (work / "train.py").write_text(USER)
    files = {"wrapper": str(pkgs / "wrapmod.py"), "generated": str(gen / "cxyz2abc.py"),
             "user": str(work / "train.py"), "work": str(work)}
    mods = (_load(pkgs / "wrapmod.py", "h_wrapmod"), _load(gen / "cxyz2abc.py", "h_cxyz2abc"),
            _load(work / "train.py", "h_train"))
    return files, mods


def _site(mods, spec=None):
    """The launch's frames under --site-filter `spec` (a fresh launch-site table per filter)."""
    wrapper, generated, user = mods
    _core._cupti_set_callsite_prefixes("\n".join(site_filter.patterns(spec)))
    _core._launch_sites_start()
    try:
        _key, sid, text = user.step(generated, wrapper.Scale())
    finally:
        _core._launch_sites_stop()
        _core._cupti_set_callsite_prefixes("\n".join(site_filter.patterns()))
    assert sid != 0, "the launch got no site"
    return json.loads(text)


def test_default_filter_names_the_users_line_and_keeps_the_library_frames(program):
    files, mods = program
    frames = _site(mods)
    site = frames[0]
    assert (site["file"], site["line"], site["function"]) == (files["user"], 6, "step")
    assert "library" not in site
    inner = site["library_frames"]
    # Innermost first: the wrapper's forward, torch's Module.__call__ machinery, the generated call.
    assert (inner[0]["file"], inner[0]["line"], inner[0]["function"]) == (files["wrapper"], 8, "Scale.forward")
    assert any("torch" in f["file"] and f["file"].endswith("module.py") for f in inner)
    assert (inner[-1]["file"], inner[-1]["function"]) == (files["generated"], "call")
    assert all(f.get("library") for f in inner)
    # The stack goes on outward: this test (user code), then pytest's frames, marked as library.
    assert frames[1]["file"] == __file__ and "library" not in frames[1]
    assert any(f.get("library") for f in frames[2:])


def test_minus_entry_makes_generated_code_the_site(program):
    files, mods = program
    frames = _site(mods, "-*/torchinductor_*/*")
    assert (frames[0]["file"], frames[0]["line"]) == (files["generated"], 6)
    assert frames[0]["library_frames"][0]["file"] == files["wrapper"]


def test_plus_entry_skips_the_users_folder_too(program):
    files, mods = program
    frames = _site(mods, "+" + files["work"])
    assert frames[0]["file"] == __file__  # the next user frame out: this test's call
    assert any(f["file"] == files["user"] for f in frames[0]["library_frames"])


def test_none_makes_the_innermost_frame_the_site(program):
    files, mods = program
    frames = _site(mods, "none")
    assert (frames[0]["file"], frames[0]["line"]) == (files["wrapper"], 8)
    assert "library_frames" not in frames[0]


def test_minus_group_shows_torch_lines(program, tmp_path):
    files, mods = program
    frames = _site(mods, "-@torch")
    # The wrapper stays library code (site-packages); torch's own frame is now the site.
    assert "torch" in frames[0]["file"] and frames[0]["file"].endswith("module.py")
    assert frames[0]["library_frames"][0]["file"] == files["wrapper"]


def test_patterns_syntax():
    default = site_filter.patterns()
    assert "*/torchinductor_*/*" in default and "*/site-packages/*" in default
    assert site_filter.patterns("none") == []
    assert site_filter.patterns("/opt/lib,*/gen/*") == ["/opt/lib/", "*/gen/*"]
    added = site_filter.patterns("+/opt/lib,-/opt/lib/mine")
    assert added[:len(default)] == default and added[len(default):] == ["/opt/lib/", "!/opt/lib/mine/"]
    with pytest.raises(ValueError, match="unknown group @bogus"):
        site_filter.patterns("+@bogus")
    with pytest.raises(ValueError, match="empty entry"):
        site_filter.patterns("+")


def test_run_refuses_a_bad_site_filter(tmp_path):
    script = tmp_path / "noop.py"
    script.write_text("print('ran')\n")
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "--site-filter", "@bogus", "-d",
                        str(tmp_path), str(script)], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "ran" not in p.stdout
    assert "unknown group @bogus" in p.stderr and p.stderr.count("\n") <= 2


def test_run_takes_a_site_filter_and_the_graph_trace_mode(tmp_path):
    script = tmp_path / "noop.py"
    script.write_text("print('ran')\n")
    p = subprocess.run([sys.executable, "-m", "rocprof", "run", "--site-filter", "+/opt/x",
                        "--graph-trace", "graph", "-d", str(tmp_path), str(script)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "ran" in p.stdout, p.stderr
    import sqlite3

    (db,) = tmp_path.glob("*.db")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    options = json.loads(con.execute("SELECT value FROM rocpd_metadata WHERE tag = 'rocprof.options'")
                         .fetchone()[0])
    assert options["site_filter"] == "+/opt/x" and options["graph_trace"] == "graph"


def test_graph_trace_setting_sits_beside_the_activities_in_both_forms():
    import argparse

    from rocprof.capture import cupti
    from rocprof.cli import run as run_cli

    p = argparse.ArgumentParser()
    run_cli.add_parser(p)
    o = run_cli.options_from(p.parse_args(["--kernel-trace", "--graph-trace", "graph", "x.py"]))
    s = _core.CaptureSettings()
    cupti.configure(o, s)
    assert s.cupti.graph_trace == "graph" and "kernels" in s.cupti.activities
    text = s.to_text()
    assert "cupti.graph_trace=graph" in text and "cupti.kernels=1" in text
    back = _core.CaptureSettings.from_text(text)
    assert back.cupti.graph_trace == "graph" and back.cupti.activities == s.cupti.activities
    assert _core.CaptureSettings().cupti.graph_trace == "node"
    with pytest.raises(ValueError, match="cupti.graph_trace must be node or graph, not 'span'"):
        _core.CaptureSettings.from_text("cupti.graph_trace=span").validate()
