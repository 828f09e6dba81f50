"""A script under `rocprof run` runs as runpy.run_path(script, run_name="__main__") runs it: the
launcher compiles a source file itself (run_path's pkgutil machinery is a tenth of its start-up)
and hands zip archives and compiled files to run_path. Each test compares with run_path or with
plain python in the same test."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import zipfile

from support import _env, run_rocprof

# What a script can see of how it was started. Latin-1 source with its coding line: the
# launcher compiles the bytes, as run_path does.
FACTS = """# -*- coding: latin-1 -*-
\"\"\"The facts' docstring.\"\"\"
import json, pickle, sys


class Point:
    pass


def typed(x: int) -> str:
    return str(x)


here = sys._getframe()
print("FACTS", json.dumps({
    "name": __name__, "file": __file__, "cached": __cached__, "spec": repr(__spec__),
    "loader": repr(__loader__), "package": __package__, "doc": __doc__,
    "argv": sys.argv, "path0": sys.path[0],
    "main_is_this_module": sys.modules["__main__"].__dict__ is globals(),
    "builtins": "__builtins__" in globals(),
    "annotations": repr(typed.__annotations__),  # no compiler flag of the launcher's
    "code_file": here.f_code.co_filename, "code_flags": here.f_code.co_flags,
    "pickled": type(pickle.loads(pickle.dumps(Point()))).__module__,
    "latin1": "caf\xe9",
    "globals": sorted(k for k in globals() if k.startswith("__")),
}))
""".encode("latin-1")

RUN_PATH = ("import os, runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; "
            "sys.path[0] = os.path.dirname(os.path.abspath(path)); "
            "runpy.run_path(path, run_name='__main__')")


def _facts(stdout: str) -> dict:
    return json.loads(next(line for line in stdout.splitlines() if line.startswith("FACTS "))[6:])


def _run_path(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN_PATH, *map(str, argv)], cwd=cwd, env=_env(None),
                          capture_output=True, text=True, timeout=60)


def test_a_script_sees_what_run_path_gives_it(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "facts.py").write_bytes(FACTS)
    for path in ("sub/facts.py", str(tmp_path / "sub" / "facts.py")):  # as typed, relative or not
        ours = run_rocprof("run", "-d", tmp_path / "out", path, "a1", "--x", cwd=tmp_path)
        assert ours.returncode == 0, ours.stderr
        reference = _run_path(path, "a1", "--x", cwd=tmp_path)
        assert reference.returncode == 0, reference.stderr
        assert _facts(ours.stdout) == _facts(reference.stdout)
    facts = _facts(ours.stdout)
    assert facts["name"] == "__main__" and facts["argv"] == [path, "a1", "--x"]
    assert facts["annotations"] == "{'x': <class 'int'>, 'return': <class 'str'>}"
    assert facts["pickled"] == "__main__" and facts["latin1"] == "caf\u00e9"


def test_a_syntax_error_reads_as_plain_pythons(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("print('never')\nx = (1,\n")
    # An absolute path: plain python names its script so, and run_path as it was typed.
    ours = run_rocprof("run", "-d", tmp_path / "out", bad)
    plain = subprocess.run([sys.executable, bad], capture_output=True, text=True, env=_env(None),
                           timeout=60)
    assert ours.returncode == plain.returncode == 1
    assert "never" not in ours.stdout
    error = [line for line in ours.stderr.splitlines() if not line.startswith("rocprof: ")]
    assert error == plain.stderr.splitlines(), ours.stderr
    assert "SyntaxError" in ours.stderr


def test_a_zip_archive_and_compiled_code_run_through_run_path(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__main__.py").write_bytes(FACTS)
    with zipfile.ZipFile(tmp_path / "app.pyz", "w") as z:
        z.write(tmp_path / "app" / "__main__.py", "__main__.py")
    (tmp_path / "c.py").write_bytes(FACTS)
    py_compile.compile(str(tmp_path / "c.py"), cfile=str(tmp_path / "c.pyc"), doraise=True)
    os.unlink(tmp_path / "c.py")
    for target in ("app.pyz", "c.pyc"):
        ours = run_rocprof("run", "-d", tmp_path / "out", target, "z", cwd=tmp_path)
        assert ours.returncode == 0, ours.stderr
        reference = _run_path(target, "z", cwd=tmp_path)
        assert reference.returncode == 0, reference.stderr
        assert _facts(ours.stdout) == _facts(reference.stdout), target
