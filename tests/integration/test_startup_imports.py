"""What `rocprof run` loads before the program runs, in the launcher and in each Python child
it follows: only what recording needs. The analysis package (rocpd) is loaded at exit, and
only for --stats, -S or -f. (The time this saves is B7's: tests/regression_guards.)"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from support import _env, run_rocprof

# Modules a profiled `python hello.py` must not find loaded on rocprof's account: the analysis
# modules (the -f choices read only rocpd's light export registry, never an exporter), pandas,
# the sqlite3 package around the C library, helpers the launcher needs only at times, the
# command line parser (the usual `rocprof run` line is read without it), what runpy.run_path
# loads to run a script (pkgutil, typing) and json with the regular expressions and enum it
# loads (the options' JSON text is the core's).
NOT_BEFORE_THE_PROGRAM = ("rocpd.summary", "rocpd.io.connection",
                          "rocpd.export.csv", "pandas", "numpy", "sqlite3", "tempfile", "subprocess",
                          "importlib.abc", "importlib.resources", "dataclasses", "inspect",
                          "rocpd.export", "argparse", "gettext", "textwrap", "pkgutil", "typing",
                          "weakref", "signal", "json", "re", "enum")
# A followed child starts its session from the launcher's description, configuring and probing
# nothing: no command line parser, options, backends, JSON, regular expressions, the sqlite3
# module's C part (its SQLite library is mapped without it) or importlib. (The capture module
# of a backend live on the host is loaded for what the child does for itself, its in_child.)
NOT_BEFORE_A_CHILD = (*NOT_BEFORE_THE_PROGRAM, "functools", "_sqlite3",
                      "importlib", "importlib.util", "rocprof.options", "rocprof.backends",
                      "rocprof.session", "rocprof.option_table", "rocprof.capture.pc_sampling",
                      "threading")

# What a launcher on an NVIDIA host runs too before the program (the CUPTI backend's set-up:
# the launch sites' library prefixes, the libcupti files to try), which this host's probe skips,
# and what that set-up must not load.
NVIDIA_SET_UP = ("from rocprof.cli import run\nfrom rocprof.capture import cupti, site_filter\n"
                 "site_filter.patterns()\ncupti.library_candidates()\n")
NOT_IN_THE_NVIDIA_SET_UP = (*NOT_BEFORE_THE_PROGRAM, "glob", "fnmatch", "sysconfig", "shutil",
                            "getpass", "random")


def _modules_line(names) -> str:
    """A script printing which of `names` are loaded (no json: it must not load what it looks for)."""
    return f"import sys\nprint('MODULES', [m for m in {list(names)!r} if m in sys.modules])\n"


def _listed_lines(stdout: str) -> list[set[str]]:
    return [set(ast.literal_eval(x.split(" ", 1)[1])) for x in stdout.splitlines()
            if x.startswith("MODULES ")]


def _listed(stdout: str) -> set[str]:
    (names,) = _listed_lines(stdout)
    return names


def _own_start(tmp_path, names) -> set[str]:
    """Which of `names` this Python's own start-up loads (its site, its .pth files)."""
    plain = tmp_path / "plain_start.py"
    plain.write_text(_modules_line(names))
    return _listed(subprocess.run([sys.executable, plain], capture_output=True, text=True,
                                  env=_env(None), timeout=60, check=True).stdout)


def test_the_launcher_and_its_children_load_only_what_recording_needs(tmp_path):
    report = _modules_line(NOT_BEFORE_THE_PROGRAM)
    child = tmp_path / "child.py"
    child.write_text(report)
    parent = tmp_path / "parent.py"
    parent.write_text(report + "import subprocess\n"
                      f"subprocess.run([sys.executable, {str(child)!r}], check=True)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", parent)
    assert r.returncode == 0, r.stderr
    launcher, followed = _listed_lines(r.stdout)
    # What this Python's own start loads (its site) is not on rocprof's account.
    site = _own_start(tmp_path, NOT_BEFORE_THE_PROGRAM)
    assert launcher <= site and followed <= site, (r.stdout, site)
    assert len(list((tmp_path / "out").glob("*.db"))) == 2  # the child was followed


def test_the_nvidia_set_up_loads_nothing_more(tmp_path):
    script = tmp_path / "nvidia_set_up.py"
    script.write_text(NVIDIA_SET_UP + _modules_line(NOT_IN_THE_NVIDIA_SET_UP))
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=_env(None),
                       timeout=60, check=True)
    assert _listed(r.stdout) <= _own_start(tmp_path, NOT_IN_THE_NVIDIA_SET_UP), r.stdout


def test_analysis_modules_load_at_exit_only_when_a_report_is_asked_for(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    plain = run_rocprof("run", "-d", tmp_path / "a", script, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert plain.returncode == 0, plain.stderr
    assert not re.search(r"\|\s+(pandas|rocpd\.(stats|io|summary|analysis|counters|report))$",
                         plain.stderr, re.M)
    stats = run_rocprof("run", "--stats", "-d", tmp_path / "b", script,
                        env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert stats.returncode == 0, stats.stderr
    assert re.search(r"\|\s+rocpd\.summary\.stats$", stats.stderr, re.M)


def test_a_backend_status_probes_only_that_backend():
    from rocprof import _core

    assert [b[0] for b in _core.backends("sampling")] == ["sampling"]
    assert _core.backends("no-such-backend") == []
    assert {b[0] for b in _core.backends()} >= {"markers", "sampling", "metrics"}


def test_a_followed_child_configures_nothing_before_its_program(tmp_path):
    child = tmp_path / "child.py"
    child.write_text(_modules_line(NOT_BEFORE_A_CHILD))
    parent = tmp_path / "parent.py"
    parent.write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, {str(child)!r}], "
                      "check=True)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", parent)
    assert r.returncode == 0, r.stderr
    assert _listed(r.stdout) <= _own_start(tmp_path, NOT_BEFORE_A_CHILD), r.stdout
    assert len(list((tmp_path / "out").glob("*.db"))) == 2  # the child was followed


# What a followed child's session must not load at its exit, when it closes: the signal
# module's enum and threading were a third of a child's added instructions (B7).
NOT_AT_A_CHILDS_EXIT = ("signal", "enum", "threading", "functools", "collections")


def _imported(importtime: str) -> set[str]:
    """The modules named in `python -X importtime` lines."""
    return {m.group(1) for m in re.finditer(r"^import time:.*\|\s+(\S+)$", importtime, re.M)}


def test_a_followed_child_loads_nothing_when_it_closes(tmp_path):
    child = tmp_path / "child.py"
    child.write_text("print('child')\n")
    parent = tmp_path / "parent.py"
    parent.write_text(
        "import os, subprocess, sys\n"
        "for name in ('plain', 'followed'):\n"
        "    env = dict(os.environ, PYTHONPROFILEIMPORTTIME='1')\n"
        "    if name == 'plain':\n"
        "        env = {k: v for k, v in env.items() if k != 'ROCPROF_CHILD_SESSION'}\n"
        "    with open(os.path.join(sys.argv[1], name + '.err'), 'w') as err:\n"
        f"        subprocess.run([sys.executable, {str(child)!r}], env=env, stderr=err, check=True)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", parent, tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "out").glob("*.db"))) == 2  # the launcher and the followed child
    plain = _imported((tmp_path / "plain.err").read_text())
    followed = _imported((tmp_path / "followed.err").read_text())
    assert "rocprof.children" in followed  # its session started (and so closed at exit)
    assert not (followed - plain) & set(NOT_AT_A_CHILDS_EXIT), followed - plain


def test_a_child_on_an_nvidia_host_loads_nothing_more(tmp_path):
    """What each followed child of a GPU-traced run does for itself where CUPTI is live
    (rocprof.capture.cupti's in_child: the backward-pass hook), which this host skips."""
    script = tmp_path / "nvidia_child.py"
    script.write_text("import rocprof.children\nfrom rocprof.capture import autograd_sites, cupti\n"
                      "autograd_sites.install()\n" + _modules_line(NOT_BEFORE_A_CHILD))
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=_env(None),
                       timeout=60, check=True)
    assert _listed(r.stdout) <= _own_start(tmp_path, NOT_BEFORE_A_CHILD), r.stdout


def test_the_program_starts_with_the_collector_on_and_the_launchers_objects_frozen(tmp_path):
    """The launcher runs without cyclic collection (start_up.py); the program gets the
    collector as plain python has it, and never walks the launcher's objects."""
    script = tmp_path / "gc_state.py"
    script.write_text("import gc\nprint('GC', gc.isenabled(), gc.get_freeze_count() > 1000)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", script)
    assert r.returncode == 0, r.stderr
    assert "GC True True" in r.stdout, r.stdout


def test_a_followed_child_starts_its_program_as_the_launcher_does(tmp_path):
    """The collector on for the program, the child session's objects frozen (start_up.py)."""
    child = tmp_path / "gc_state.py"
    child.write_text("import gc\nprint('GC', gc.isenabled(), gc.get_freeze_count() > 1000)\n")
    parent = tmp_path / "parent.py"
    parent.write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, {str(child)!r}], "
                      "check=True)\n")
    r = run_rocprof("run", "-d", tmp_path / "out", parent)
    assert r.returncode == 0, r.stderr
    assert "GC True True" in r.stdout, r.stdout
    assert len(list((tmp_path / "out").glob("*.db"))) == 2  # the child was followed
