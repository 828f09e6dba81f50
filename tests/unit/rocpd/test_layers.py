"""Layering of the rocpd package: every module imports on its own in a fresh interpreter, and the
connection layer loads nothing of the analysis layers above it (frames, summary, fastagg ...)."""

import os
import pathlib
import subprocess
import sys

import pytest

import rocpd

PKG = pathlib.Path(rocpd.__file__).parent
ROOT = PKG.parent


def _modules():
    out = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__":  # runs the CLI when imported: not a library module
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


def _python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=120)


def test_every_module_is_listed():
    mods = _modules()
    assert {"rocpd.io.connection", "rocpd.summary.frames", "rocpd.summary.core", "rocpd.summary.fastagg", "rocpd.regex",
            "rocpd.export.csv", "rocpd.cli.summary"} <= set(mods)


# rocpd is pure Python over rocshared: each module imports with the launcher (rocprof, roctx and
# the native core) out of reach.
_NO_LAUNCHER = ("import sys\n"
                "class _Refuse:\n"
                "    def find_spec(self, name, path=None, target=None):\n"
                "        if name.partition('.')[0] in ('rocprof', 'roctx'):\n"
                "            raise ImportError(f'{name}: the launcher is out of reach here')\n"
                "sys.meta_path.insert(0, _Refuse())\n")


@pytest.mark.parametrize("module", _modules())
def test_module_imports_alone(module):
    r = _python(f"{_NO_LAUNCHER}import {module}")
    assert r.returncode == 0, f"import {module} failed in a fresh interpreter:\n{r.stderr}"


HIGHER = ("rocpd.summary", "rocpd.counters", "rocpd.device_metrics", "rocpd.ranks", "rocpd.stats", "rocpd.compare",
          "rocpd.report", "rocpd.plots", "rocpd.export", "rocpd.cli")


def test_connection_loads_no_higher_layer():
    r = _python("import sys, rocpd.io.connection\n"
                "print(' '.join(sorted(m for m in sys.modules if m.startswith('rocpd'))))")
    assert r.returncode == 0, r.stderr
    loaded = r.stdout.split()
    assert "rocpd.io.connection" in loaded
    assert [m for m in loaded if m.startswith(HIGHER)] == []
    assert "pandas" not in r.stdout


def test_frame_methods_bound_after_a_bare_import(run_db):
    path, raw = run_db
    r = _python("import sys\n"
                "from rocpd.io.connection import Connection\n"
                f"db = Connection({path!r})\n"
                "assert 'rocpd.summary.frames' not in sys.modules\n"
                "print(len(db.kernels()), db.kernel_stats()['Calls'].sum(), db.run_bounds()[0] > 0)\n"
                "print(Connection.kernels.__doc__.split('(')[0].strip())")
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    n = len(raw["kernels"])
    assert first == f"{n} {n} True"
    assert second == "One row per kernel dispatch"


def test_names_kept_for_notebooks_are_the_modules_themselves():
    """rocpd.stats and rocpd.compare, as scripts written against them import them, are the very
    modules that moved (rocpd.summary.stats, rocpd.diff.compare): one home, two names."""
    from rocpd import stats
    from rocpd.compare import compare
    from rocpd.diff.compare import compare as moved
    from rocpd.summary import stats as summary_stats

    assert stats is summary_stats and compare is moved
    assert sys.modules["rocpd.stats"] is summary_stats


def test_the_tests_are_laid_out_as_the_package():
    """tests/unit/rocpd mirrors rocpd: a folder per sub-package, rocpd's base modules' tests here."""
    here = pathlib.Path(__file__).parent
    folders = {p.name for p in here.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    packages = {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert folders and folders <= packages, folders - packages
