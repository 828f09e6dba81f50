"""Imports inside functions: only where loading must wait, and only where waiting saves something.

An import inside a function hides a dependency until the function runs. It is for optional
dependencies (pandas, perfetto, torch ...: no project module; rocprof from rocpd, which reads
databases without it) and, for a project module, only in the modules of ``LAZY`` below, each with
why. Everywhere else a project module is imported at the top of the module; one that could not
be (it would import a higher layer) says that the piece it needs belongs lower. Inside ``LAZY``, an
import of what the module's own top-level imports load already defers nothing and fails too.

The imports are read with ``ast`` as tests/unit/test_import_graph.py reads them (relative ones
resolved, ``importlib.import_module("literal")`` included); a module loaded by a computed name
(the backends' registry, rocpd's subcommands, the report's sections) is a registry read at run
time, not an import here.
"""

from __future__ import annotations

import ast
import pathlib

from test_import_graph import ROOT, _imports, _names, _write, modules

LAZY = {
    # `rocprof run`: nothing loads before the program that recording does not need
    "rocprof": "the package top: `import rocprof` loads the version only; the session and the "
               "notebook magic load on first use",
    "rocprof.__main__": "the console script: the command line loads when it runs",
    "rocprof.cli.*": "one module per subcommand, each imported to build the parser: a subcommand "
                     "loads what it runs",
    "rocprof._child.sitecustomize": "starts every followed Python child: its session loads inside "
                                    "the guard that never breaks the child's program",
    "rocprof.children": "the child's session: --collection-period's thread loads when asked for",
    "rocprof.session": "every launcher and child: --module-trace's hooks and the NCCL plugin's "
                       "module load when the options ask for them",
    "rocprof.backends": "the registry of capture backends: each one's module loads by name when a "
                        "session is configured, the AMD PC-sampling probe for `rocprof info` and "
                        "--pc-sampling",
    "rocprof.capture.cupti": "imported on every host for its prepare(): the launch-site helpers "
                             "load where CUPTI is live, the counter names (rocshared) for --pmc/--sol, "
                             "the PC-sampling settings in the launcher only (each followed child "
                             "runs in_child)",
    "rocprof.capture.autograd_sites": "rocprof._torch_observer links libtorch: it loads once "
                                      "torch itself is imported, in the processes that trace",
    "rocprof.run_report": "runs in every profiled process: rocpd's analysis loads at exit, and "
                          "only for -S/--stats/-f",
    "rocprof.process_hooks": "every followed child installs its hooks before its program: the "
                             "exit report's module loads when the process ends or exec()s",
    "rocprof.paths": "every profiled process imports it and expands no placeholder in Python "
                     "(the core does): rocshared's expansion loads for `rocprof run -- CMD`'s "
                     "check of the output path",
    # rocpd: light entry points above heavy implementations
    "rocpd": "the facade: `import rocpd` needs the standard library only (the launcher reads "
             "rocpd.export's registry before the program); each of ROCm's names loads its part",
    "rocpd.cli.*": "`rocpd` imports every subcommand to build its parser: each loads its "
                   "implementation when it runs",
    "rocpd.summary.rocm": "`rocpd` builds every parser, and `rocpd summary`'s reads its -f choices "
                          "here: the report's PDF table writer loads for -f pdf only",
    "rocpd.report": "the package holds the page builder beside the light modules that `rocpd "
                    "query` and every report section use (sections, table_files): the analysis, "
                    "charts and exporters load when a page is built",
}
# Whose modules are project modules to whom: rocpd is the analysis package under rocprof, and
# rocshared lies under both.
PROJECT = {"rocprof": ("rocprof", "roctx", "rocpd", "rocshared"),
           "roctx": ("rocprof", "roctx", "rocpd", "rocshared"),
           "rocpd": ("rocpd", "rocshared"), "rocshared": ("rocshared",)}


def all_modules(root: pathlib.Path = ROOT):
    mods = modules(root / "python", "rocprof")
    mods.update(modules(root / "python", "roctx"))
    mods.update(modules(root, "rocpd"))
    mods.update(modules(root, "rocshared"))
    return mods


def lazy_entry(module: str, lazy: dict[str, str]) -> str | None:
    """The entry of ``lazy`` naming ``module`` ("pkg.*": the package and everything in it)."""
    for pattern in lazy:
        if module == pattern.removesuffix(".*") or (pattern.endswith(".*")
                                                   and module.startswith(pattern[:-1])):
            return pattern
    return None


def project_imports(mods, project=PROJECT):
    """{module: [(line, source text, inside a function, {project modules it imports})]}."""
    out = {}
    for name, (path, is_pkg) in mods.items():
        out[name] = []
        if path is None:
            continue
        package = name if is_pkg else name.rpartition(".")[0]
        ours = project.get(name.partition(".")[0], ())
        for node, inside in _imports(ast.parse(path.read_text(), str(path))):
            found = set()
            for t in _names(node, package, mods):
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name and t.partition(".")[0] in ours:
                    found.add(t)
            if found:
                out[name].append((node.lineno, ast.unparse(node), inside, found))
    return out


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def loaded_by(module: str, imports, mods) -> set[str]:
    """What importing ``module`` loads for certain: its packages and the modules its top-level
    imports load, theirs included."""
    def top(m):
        return [t for _, _, inside, found in imports[m] if not inside for t in found]

    seen: set[str] = set()
    todo = [*_ancestors(module), *top(module)]
    while todo:
        m = todo.pop()
        if m in seen or m not in mods:
            continue
        seen.add(m)
        todo += _ancestors(m) + top(m)
    return seen


def lazy_import_problems(root: pathlib.Path = ROOT, lazy=LAZY, project=PROJECT,
                         mods=None) -> tuple[list[str], list[str], list[str]]:
    """(function-level imports of project modules outside ``lazy``; those inside it that defer
    nothing; entries of ``lazy`` that no module needs), the imports as "file:line: text"."""
    mods = all_modules(root) if mods is None else mods
    imports = project_imports(mods, project)
    outside, idle, used = [], [], set()
    for name in sorted(mods):
        lazies = sorted((line, text, found) for line, text, inside, found in imports[name]
                        if inside)
        if not lazies:
            continue
        where = mods[name][0].relative_to(root)
        entry = lazy_entry(name, lazy)
        if entry is None:
            outside += [f"{where}:{line}: {text}" for line, text, _ in lazies]
            continue
        loaded = loaded_by(name, imports, mods)
        for line, text, found in lazies:
            if found <= loaded:
                idle.append(f"{where}:{line}: {text} ({', '.join(sorted(found))} loaded with "
                            "the module already)")
            else:
                used.add(entry)
    return outside, idle, sorted(set(lazy) - used)


def test_function_level_imports_only_where_loading_must_wait():
    outside, idle, stale = lazy_import_problems()
    assert not outside, (
        "project modules imported inside functions outside the modules that must load late "
        "(LAZY in this file): import them at the top of the module; if that imports a higher "
        "layer, move the piece both need lower\n  " + "\n  ".join(outside))
    assert not idle, ("imports inside functions that defer nothing: import them at the top of the "
                      "module\n  " + "\n  ".join(idle))
    assert not stale, f"LAZY entries that no module needs any more: {stale}"


def test_lazy_imports_are_named_where_not_allowed_or_idle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": "X = 1\n",
        "pkg/heavy.py": "Y = 2\n",
        "pkg/low.py": "def f():\n    import json\n    import pandas\n    from .heavy import Y\n"
                      "    return Y\n",
        "pkg/cli.py": "from . import base\n\n\ndef run():\n    from . import heavy\n"
                      "    from .base import X\n    return heavy, X\n",
    })
    lazy = {"pkg.cli": "loads what it runs", "pkg.gone": "no module needs it"}
    outside, idle, stale = lazy_import_problems(tmp_path, lazy, {"pkg": ("pkg",)},
                                                modules(tmp_path, "pkg"))
    assert outside == ["pkg/low.py:4: from .heavy import Y"]  # json and pandas are not ours
    assert idle == ["pkg/cli.py:6: from .base import X (pkg.base loaded with the module already)"]
    assert stale == ["pkg.gone"]


def test_a_package_loads_its_parents_and_their_imports(tmp_path):
    """What a module's packages import at their top is loaded with it: importing it again inside
    a function defers nothing."""
    _write(tmp_path, {
        "pkg/__init__.py": "from . import base\n",
        "pkg/base.py": "X = 1\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/mod.py": "def f():\n    import pkg\n    from pkg.base import X\n    return X\n",
    })
    mods = modules(tmp_path, "pkg")
    imports = project_imports(mods, {"pkg": ("pkg",)})
    assert loaded_by("pkg.sub.mod", imports, mods) == {"pkg", "pkg.base", "pkg.sub"}
    _, idle, _ = lazy_import_problems(tmp_path, {"pkg.sub.*": "why"}, {"pkg": ("pkg",)}, mods)
    assert [i.split(":")[1] for i in idle] == ["2", "3"]


# pandas and numpy are required dependencies (pyproject.toml): a module that works on frames
# imports them at its top. Inside a function only in these modules, each with why: what loads
# before a profiled program (B7) or to build a parser, and the light readers ROCm's names stand
# for.
LAZY_FRAMES = {
    "rocprof.*": "every profiled process and the launcher: nothing before the program that "
                 "recording does not need; frames load at exit, for -S/--stats/-f only",
    "rocpd": "the facade: `import rocpd` needs the standard library only",
    "rocpd.cli.*": "`rocpd` imports every subcommand to build its parser: frames load when one runs",
    "rocpd.io.*": "a Connection alone (ROCm's rocpd.connect) reads with the standard library and "
                  "sqlite3; its frame methods load pandas when called (tests/unit/rocpd/test_layers)",
    "rocpd.regex": "the launcher checks --kernel-include-regex with it before the program: frames "
                   "load only to filter a frame",
    "rocpd.textfmt": "console text for the launcher's exit lines and a bare Connection: frames load "
                     "for a table only",
    "rocpd.summary.fastagg": "`rocpd summary` starts the kernel ranges' reads (numpy) before it "
                             "imports pandas, which it needs only to combine their results",
    "rocpd.export.*": "the launcher reads the export registry before the program (-f)",
}
REQUIRED_FRAMES = ("pandas", "numpy")


def frame_imports_inside_functions(root: pathlib.Path = ROOT, lazy=LAZY_FRAMES) -> list[str]:
    """Function-level imports of pandas or numpy in modules outside ``lazy``, as
    "file:line: text"."""
    out = []
    for name, (path, _) in sorted(all_modules(root).items()):
        if path is None or lazy_entry(name, lazy) is not None:
            continue
        for node, inside in _imports(ast.parse(path.read_text(), str(path))):
            if inside and isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    n.partition(".")[0] in REQUIRED_FRAMES for n in _names(node, name, {})):
                out.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_pandas_and_numpy_load_at_the_top_of_modules_that_use_them():
    found = frame_imports_inside_functions()
    assert not found, ("pandas/numpy imported inside functions of modules that work on frames: "
                       "import them at the top (or add the module to LAZY_FRAMES with why it "
                       "must load late)\n  " + "\n  ".join(found))


def test_a_frame_import_inside_a_function_is_found(tmp_path):
    _write(tmp_path, {"rocpd/__init__.py": "", "rocpd/low.py": "def f():\n    import pandas\n",
                      "rocpd/cli/__init__.py": "def g():\n    import numpy as np\n"})
    assert frame_imports_inside_functions(tmp_path) == ["rocpd/low.py:2: import pandas"]
