"""The import graph of rocpd and of the launcher (python/rocprof, python/roctx) has no cycle,
rocpd's layers import only downwards, and the packages import one way: rocshared under both,
rocpd (analysis) never importing the launcher, the launcher's capture never importing rocpd.

The graph is read from the sources with ``ast``: every ``import`` and ``from ... import`` anywhere
in a module (inside functions too: a function-level import is still a dependency, only a later
one), relative imports resolved, ``importlib.import_module("literal")`` included. Importing
``pkg.mod`` is an edge to ``pkg.mod`` only (Python runs ``pkg/__init__`` first, but that is the
package's own business); ``from pkg import name`` is an edge to ``pkg.name`` where that is a
module, else to ``pkg``. String-named plug-ins (``rocpd.report.sections.OPTIONAL``, the lazily
bound Connection methods) are not edges: they are registries read at run time.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def modules(base: pathlib.Path, package: str) -> dict[str, tuple[pathlib.Path | None, bool]]:
    """{dotted name: (source path or None for a compiled module, is a package)}."""
    top = base / package.replace(".", "/")
    out: dict[str, tuple[pathlib.Path | None, bool]] = {}
    for p in sorted(top.rglob("*.py")):
        parts = list(p.relative_to(base).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    for p in sorted(top.rglob("*.so")):  # rocprof._core: a module, never the package itself
        rel = p.relative_to(base)
        out[".".join([*rel.parts[:-1], rel.name.split(".")[0]])] = (None, False)
    if package == "rocprof":  # the compiled modules the build makes, built here or not
        for name in compiled_modules():
            out.setdefault(f"rocprof.{name}", (None, False))
    return out


def compiled_modules() -> list[str]:
    """The extension modules cpp/ builds into the rocprof package (pybind11_add_module,
    Python_add_library): a build without torch has no _torch_observer, and its imports still
    name a module."""
    found = []
    for cmake in sorted((ROOT / "cpp").rglob("CMakeLists.txt")):
        found += re.findall(r"(?:pybind11_add_module|Python_add_library)\((\w+)", cmake.read_text())
    return found


def _imports(tree: ast.AST):
    """(import node, whether it runs inside a function) for every import in ``tree``: the
    statements and ``importlib.import_module("literal")`` calls."""
    todo = [(tree, False)]
    while todo:
        node, inside = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, inside
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            yield node, inside
        inner = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        todo += [(child, inner) for child in ast.iter_child_nodes(node)]


def _names(node: ast.AST, package: str, known) -> set[str]:
    """The dotted names one import node loads, relative ones resolved."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if isinstance(node, ast.ImportFrom):
        if node.level:
            parts = package.split(".")
            parts = parts[:len(parts) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        return {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    name = node.args[0].value
    return {package + name if name.startswith(".") else name}


def _targets(tree: ast.AST, package: str, known) -> set[str]:
    found: set[str] = set()
    for node, _inside in _imports(tree):
        found |= _names(node, package, known)
    return found


def graph(mods) -> dict[str, set[str]]:
    """{module: modules of ``mods`` it imports}; a name inside a module counts as the module."""
    edges: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        if path is None:
            edges[name] = set()
            continue
        package = name if is_pkg else name.rpartition(".")[0]
        deps = set()
        for t in _targets(ast.parse(path.read_text(), str(path)), package, mods):
            while t and t not in mods:
                t = t.rpartition(".")[0]
            if t and t != name:
                deps.add(t)
        edges[name] = deps
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a path back to its start) per strongly connected component of several modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graphs are small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [_path_through(set(c), edges) for c in comps]


def _path_through(comp: set[str], edges) -> list[str]:
    """A shortest cycle from the component's first module back to itself, for the message."""
    start = min(comp)
    prev = {start: None}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(edges[v] & comp):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return [*reversed(path), start]
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return sorted(comp)


def _launcher():
    mods = modules(ROOT / "python", "rocprof")
    mods.update(modules(ROOT / "python", "roctx"))
    return mods


def _everything():
    mods = modules(ROOT, "rocpd")
    mods.update(modules(ROOT, "rocshared"))
    mods.update(_launcher())
    return mods


GRAPHS = {"rocpd": lambda: modules(ROOT, "rocpd"), "rocprof": _launcher, "all": _everything}


@pytest.mark.parametrize("which", sorted(GRAPHS))
def test_no_import_cycle(which):
    mods = GRAPHS[which]()
    found = cycles(graph(mods))
    assert not found, f"{len(found)} import cycle(s) in {which}:\n" + "\n".join(
        "  " + " -> ".join(c) for c in found) + (
        "\nMove the piece both sides need into a lower module; a function-level import does not"
        " break a cycle.")


# rocpd's layers, lowest first: a module imports only from its own layer or lower ones. The most
# specific name wins (rocpd.ranks.section sits above rocpd.ranks). "rocpd" is the package's top,
# rocpd/__init__.py: the facade (connect, ROCm's names) that nothing inside the package imports.
LAYERS = [
    # base: standard library only
    ("rocpd.errors", "rocpd._schema", "rocpd.regex", "rocpd.progress", "rocpd.output_config",
     "rocpd.textfmt", "rocpd.testing"),
    # reading databases
    ("rocpd.io", "rocpd.importer"),
    ("rocpd.summary", "rocpd.plots", "rocpd.collectives"),
    ("rocpd.counters", "rocpd.device_metrics", "rocpd.analysis", "rocpd.cluster", "rocpd.energy",
     "rocpd.memory"),
    ("rocpd.summary.stats", "rocpd.stats", "rocpd.diff", "rocpd.compare", "rocpd.ranks",
     "rocpd.pc_sampling"),
    ("rocpd.export",),
    ("rocpd.report", "rocpd.summary.run"),
    # report sections that live beside their analysis (hooked in by name from report.sections)
    ("rocpd.ranks.section", "rocpd.counters.section", "rocpd.pc_sampling.section",
     "rocpd.collectives.report", "rocpd.energy.section", "rocpd.device_metrics.section",
     "rocpd.memory.section"),
    # ROCm's summary files: the PDF form is the report's table writer
    ("rocpd.summary.rocm",),
    ("rocpd", "rocpd.cli"),
    ("rocpd.__main__",),
]


def layer_of(module: str) -> int:
    best, level = "", None
    for i, names in enumerate(LAYERS):
        for n in names:
            hit = module == n if n == "rocpd" else module == n or module.startswith(n + ".")
            if hit and len(n) > len(best):
                best, level = n, i
    if level is None:
        raise KeyError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return level


def test_rocpd_imports_only_downwards():
    edges = graph(modules(ROOT, "rocpd"))
    up = [f"{a} (layer {layer_of(a)}) imports {b} (layer {layer_of(b)})"
          for a in sorted(edges) for b in sorted(edges[a]) if layer_of(b) > layer_of(a)]
    assert not up, "rocpd imports a higher layer:\n  " + "\n  ".join(up)


def test_every_rocpd_module_has_a_layer():
    for m in modules(ROOT, "rocpd"):
        layer_of(m)


# python/rocprof's front ends: the package top (the IPython extension hook), the console script,
# the command line and the notebook magic (which parses `rocprof run`'s options). The session, the
# backends and everything else below them never import them.
FRONT_ENDS = ("rocprof", "rocprof.__main__", "rocprof.cli", "rocprof.notebook")


def _front_end(module: str) -> bool:
    return any(module == f or f != "rocprof" and module.startswith(f + ".") for f in FRONT_ENDS)


def test_nothing_below_the_front_ends_imports_them():
    edges = graph(_launcher())
    up = [f"{a} imports {b}" for a in sorted(edges) if not _front_end(a)
          for b in sorted(edges[a]) if _front_end(b)]
    assert not up, "python/rocprof imports a front end from below it:\n  " + "\n  ".join(up)


# The packages' one direction. rocshared (the version, output-path placeholders, counter names,
# the peaks cache) sits under both and imports neither. rocpd reads databases without the
# launcher or the native core, but for its fixture builders: they write through the native writer
# (loaded inside a function, so that `import rocpd.testing` needs no native core). Of the
# launcher, only the front ends and run_report (the report written at exit) read databases with
# rocpd; the session, the backends and capture/ never do.
FIXTURE_WRITER = {("rocpd.testing.builder", "rocprof._core")}
READS_DATABASES = ("rocprof.run_report",)


def _package(module: str) -> str:
    return module.partition(".")[0]


def crossing_imports(edges: dict[str, set[str]]) -> list[str]:
    """The imports across packages that go against the one direction, as "a imports b"."""
    bad = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            pa, pb = _package(a), _package(b)
            if pa == pb or pb == "rocshared":
                continue
            wrong = (pa == "rocshared"
                     or pa == "rocpd" and (a, b) not in FIXTURE_WRITER
                     or pb == "rocpd" and not (_front_end(a) or a in READS_DATABASES))
            if wrong:
                bad.append(f"{a} imports {b}")
    return bad


def test_packages_import_one_way():
    bad = crossing_imports(graph(_everything()))
    assert not bad, ("an import against rocshared < rocpd, rocprof's capture (what both share "
                     "belongs in rocshared):\n  " + "\n  ".join(bad))


def test_one_way_rule_names_each_wrong_direction():
    edges = {"rocshared.a": {"rocpd.io"}, "rocpd.io": {"rocprof.session", "rocshared.a"},
             "rocprof.capture.x": {"rocpd.counters", "rocshared.a"}, "rocprof.cli.run": {"rocpd.io"},
             "rocprof.run_report": {"rocpd.export"}, "rocpd.testing.builder": {"rocprof._core"}}
    assert crossing_imports(edges) == ["rocpd.io imports rocprof.session",
                                       "rocprof.capture.x imports rocpd.counters",
                                       "rocshared.a imports rocpd.io"]


def test_function_level_imports_are_edges():
    """The graph sees imports inside functions and resolves relative ones (these are real ones:
    rocpd.connect reaches rocpd.cluster only inside the function, and so on)."""
    rocpd_edges = graph(modules(ROOT, "rocpd"))
    assert "rocpd.cluster" in rocpd_edges["rocpd"]
    assert "rocpd.io.connection" in rocpd_edges["rocpd"]
    assert "rocpd.cli.summary" not in rocpd_edges["rocpd.cli"]  # loaded by a computed name
    assert "rocprof.capture.module_trace" in graph(_launcher())["rocprof.session"]


def _write(root: pathlib.Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_a_cycle_through_a_function_level_import_is_named(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from .sub.high import g\n    return g\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/high.py": "from .. import low\n\ndef g():\n    return low\n",
        "pkg/other.py": "import importlib\nimportlib.import_module('pkg.low')\n",
    })
    edges = graph(modules(tmp_path, "pkg"))
    assert edges["pkg.low"] == {"pkg.sub.high"} and edges["pkg.sub.high"] == {"pkg.low"}
    assert edges["pkg.other"] == {"pkg.low"}
    assert cycles(edges) == [["pkg.low", "pkg.sub.high", "pkg.low"]]


def test_no_cycle_where_a_package_imports_its_modules(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from .a import x\n",
        "pkg/a.py": "from . import b\nx = 1\n",
        "pkg/b.py": "from .c import y\n",
        "pkg/c.py": "y = 2\n",
    })
    edges = graph(modules(tmp_path, "pkg"))
    assert edges["pkg"] == {"pkg.a"} and edges["pkg.a"] == {"pkg.b"}
    assert cycles(edges) == []

