"""The identities two runs are matched by: a kernel's name without what changes from build to
build, an API call's name without its vendor, and a Python line without the folder the run was
started from.

- Kernel names: ``void`` and the argument list are dropped (CUPTI and ROCm give demangled names
  with and without them), numbers become ``#`` (tile sizes, vector widths and template counters
  change when a library picks another variant for the same operation), spaces are collapsed.
- API names: ``cuda``/``hip``/``cu`` prefixes and the ``_v2``/``_ptsz`` suffixes go, so that
  ``cudaDeviceSynchronize`` and ``hipDeviceSynchronize`` are one call.
- Lines: each run's paths relative to the folder holding all of that run's files, so a checkout
  in /home/a/proj and one in /scratch/b/proj match; a line that still differs is matched by its
  file name and number when that is unambiguous in both runs.
"""

from __future__ import annotations

import os
import re

NO_LINE = "(no line)"
_VOID = re.compile(r"^\s*void\s+")
_DIGITS = re.compile(r"\d+")
_API_PREFIX = re.compile(r"^(cuda|hip|cu)(?=[A-Z])")
_API_SUFFIX = re.compile(r"(_v\d+|_ptsz|_ptds|_spt)+$")


def _without_arguments(name: str) -> str:
    """``name`` without a trailing balanced ``(...)`` (the parameter list)."""
    s = name.rstrip()
    if not s.endswith(")"):
        return s
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        if s[i] == ")":
            depth += 1
        elif s[i] == "(":
            depth -= 1
            if depth == 0:
                head = s[:i].rstrip()
                return head or s
    return s


def kernel_key(name) -> str:
    """The key a kernel is matched by across runs (see the module's text)."""
    s = _VOID.sub("", str(name or ""))
    s = _without_arguments(s)
    s = _DIGITS.sub("#", s)
    return " ".join(s.split())


def api_key(name) -> str:
    """An API call's name without vendor prefix and version suffix: 'DeviceSynchronize'."""
    s = _API_SUFFIX.sub("", str(name or ""))
    return _API_PREFIX.sub("", s)


def _split(site: str) -> tuple[str, str]:
    path, sep, line = site.rpartition(":")
    return (path, line) if sep and line.isdigit() else (site, "")


def _relative(sites) -> dict[str, str]:
    """Each site relative to the folder holding every file of ``sites``."""
    paths = {_split(s)[0] for s in sites}
    absolute = [p for p in paths if os.path.isabs(p)]
    root = ""
    if absolute:
        try:
            root = os.path.commonpath([os.path.dirname(p) for p in absolute])
        except ValueError:
            root = ""
    out = {}
    for s in sites:
        path, line = _split(s)
        rel = os.path.relpath(path, root) if root and os.path.isabs(path) else path
        out[s] = f"{rel}:{line}" if line else rel
    return out


def _short(label: str) -> str:
    path, line = _split(label)
    base = path.rsplit("/", 1)[-1]
    return f"{base}:{line}" if line else base


def line_labels(sites_a, sites_b) -> tuple[dict, dict]:
    """Labels for the sites ('/abs/path/file.py:42') of two runs such that the same line of the
    same program has one label in both: {site: label} for each run."""
    a = _relative({s for s in sites_a if s})
    b = _relative({s for s in sites_b if s})
    la, lb = set(a.values()), set(b.values())
    only_a = [x for x in la if x not in lb]
    only_b = [x for x in lb if x not in la]
    short_a: dict[str, list[str]] = {}
    short_b: dict[str, list[str]] = {}
    for x in only_a:
        short_a.setdefault(_short(x), []).append(x)
    for x in only_b:
        short_b.setdefault(_short(x), []).append(x)
    rename = {}
    for short, xs in short_a.items():
        ys = short_b.get(short, [])
        if len(xs) == 1 and len(ys) == 1:
            rename[xs[0]] = ys[0]  # one label per line: the new run's
    a = {s: rename.get(x, x) for s, x in a.items()}
    return a, b


def short_label(label: str) -> str:
    """'model.py:23' for 'pkg/model.py:23' (tables and titles)."""
    return _short(label) if label and label != NO_LINE else (label or NO_LINE)
