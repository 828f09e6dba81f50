"""`rocprof completion bash|zsh`: the scripts complete what the parsers of `rocprof` and `rocpd`
hold (checked by running the real shells' completion: bash through its completion function
with the words a shell would hand it, zsh by typing the line and a TAB into an interactive
zsh), and profiling a program imports none of it."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import pytest
from rocprof.cli.completion_scripts import levels
from support import run_rocprof

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    out = tmp_path_factory.mktemp("completion")
    paths = {}
    for shell in ("bash", "zsh"):
        r = run_rocprof("completion", shell)
        assert r.returncode == 0, r.stderr
        paths[shell] = out / ("rocprof.bash" if shell == "bash" else "_rocprof")
        paths[shell].write_text(r.stdout)
    return paths


def bash_complete(script: Path, line: str) -> list[str]:
    """What `complete -F` hands the function for LINE<TAB> (COMP_WORDS split as bash splits
    them, `=` a word of its own), and the candidates it offers."""
    words = line.replace("=", " = ").split() + ([""] if line.endswith((" ", "=")) else [])
    if line.endswith("="):
        words = words[:-1]
    program = (f"source {script}\nCOMP_WORDS=({' '.join(repr(w) for w in words)})\n"
               "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_rocprof_complete\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
               "complete -p rocprof rocpd\n")
    r = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-2:] == ["complete -o default -F _rocprof_complete rocprof",
                          "complete -o default -F _rocprof_complete rocpd"], lines
    return [x for x in lines[:-2] if x]


@pytest.mark.parametrize("line, expected", [
    ("rocprof ", ["run", "info", "avail", "peaks", "ctl", "attach", "completion"]),
    ("rocprof run --sampling-m", ["--sampling-mode", "--sampling-method"]),
    ("rocprof run --sampling-mode ", ["cpu", "wall"]),
    ("rocprof run --sampling-mode=", ["=cpu", "=wall"]),       # replaces the `=` word
    ("rocprof run --sampling-mode=w", ["wall"]),
    ("rocprof run -d out --collection-period-unit m", ["min", "msec"]),
    ("rocprof run -f csv ", ["csv", "json", "pftrace", "otf2", "rocpd"]),
    ("rocprof run --stats f", ["false"]),
    ("rocprof run -d out train.py --", []),                    # the script's own: file names
    ("rocprof run -- python3 -", []),
    ("rocprof completion ", ["bash", "zsh"]),
    ("rocpd su", ["summary"]),
    ("rocpd summary a.db --by ", ["pid", "rank", "host", "module"]),
])
def test_bash(scripts, line, expected):
    assert bash_complete(scripts["bash"], line) == expected


def test_bash_offers_every_visible_option_of_every_subcommand(scripts):
    for root in levels():
        todo = [root]
        while todo:
            level = todo.pop()
            todo += level.subcommands
            line = " ".join(level.path) + " --"
            offered = set(bash_complete(scripts["bash"], line))
            wanted = {n for o in level.options for n in o.names if n.startswith("--")}
            assert offered == wanted, (line, wanted ^ offered)
            if level.subcommands:
                assert bash_complete(scripts["bash"], " ".join(level.path) + " ") == \
                    [s.path[-1] for s in level.subcommands]


def test_hidden_options_are_accepted_but_not_offered():
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--shown", help="a")
    p.add_argument("--old-name", dest="shown", help=argparse.SUPPRESS)
    from rocprof.cli.completion_scripts import walk

    assert [o.names for o in walk(p, ["x"]).options] == [["-h", "--help"], ["--shown"]]


needs_zsh = pytest.mark.skipif(shutil.which("zsh") is None,
                               reason="zsh is not installed (Debian package zsh; make test installs it as root)")


def zsh_complete(script: Path, line: str, tmp_path: Path) -> list[str]:
    capture = tmp_path / "capture"
    r = subprocess.run(["zsh", "-f", str(HERE / "zsh_complete.zsh"), str(script), str(capture), line],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return capture.read_text().splitlines()


@needs_zsh
@pytest.mark.parametrize("line, expected", [
    ("rocprof ", ["run", "info", "avail", "peaks", "ctl", "attach", "completion"]),
    ("rocprof run --sampling-mode ", ["cpu", "wall"]),
    ("rocprof run --sampling-mode=", ["cpu", "wall"]),
    ("rocprof run --stats=", ["true", "false"]),
    ("rocprof run -f ", ["csv", "json", "pftrace", "otf2", "rocpd"]),
    ("rocprof completion ", ["bash", "zsh"]),
    ("rocpd summary --by ", ["pid", "rank", "host", "module"]),
])
@pytest.mark.parametrize("how", ["autoloaded", "sourced"])
def test_zsh(scripts, tmp_path, line, expected, how):
    script = scripts["zsh"]
    if how == "sourced":
        script = tmp_path / "rocprof.zsh"
        shutil.copy(scripts["zsh"], script)
    assert zsh_complete(script, line, tmp_path) == expected


@needs_zsh
def test_zsh_options_carry_their_descriptions(scripts, tmp_path):
    offered = zsh_complete(scripts["zsh"], "rocprof run --sampl", tmp_path)
    assert offered == ["--sample", "--sampling-mode", "--sampling-method"]
    text = scripts["zsh"].read_text()
    assert "--sampling-mode=[cpu (default)" in text


def test_profiling_imports_no_completion_code(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nprint(sorted(m for m in sys.modules if 'completion' in m or "
                     "m.startswith(('rocprof.cli.info', 'rocprof.cli.avail', 'rocprof.cli.peaks'))))\n")
    r = run_rocprof("run", "-d", tmp_path, probe)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_completing_starts_no_python(scripts):
    """The scripts hold the parsers' options as data: a TAB runs shell code only."""
    bash = scripts["bash"].read_text()
    assert bash.count("$(") == bash.count("$(compgen ") > 0
    assert "$(" not in scripts["zsh"].read_text()
