"""Which Python frames are library code: a GPU launch's *site* is its innermost frame that is not.

The native side (cpp/capture/python/launch_sites) keeps every launch's whole Python stack and
names as its site the innermost user frame; the library frames inside it (torch, triton, an
inductor-generated file) stay on the site as its ``library_frames``.

``--site-filter SPEC``: comma-separated entries, each

- ``@GROUP``: a named part of the default (:data:`GROUPS`);
- a path prefix (``/opt/mylib/``; a relative path is taken from the current directory);
- a glob (``*``, ``?`` or ``[`` in it) matched against the whole file name, ``*`` crossing ``/``.

``+ENTRY`` adds library code to the default list; ``-ENTRY`` makes code user code even where
another entry (e.g. ``@site-packages``) would skip it (``-@torch`` shows torch's own lines). Entries
without a sign replace the default list; ``none`` is the empty list. Frames of code without a file
(``<frozen runpy>``, fx's ``<eval_with_key>``) are never sites.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sys

DEFAULT = "@stdlib,@site-packages,@torch,@triton,@generated,@rocprof"
GROUPS = ("stdlib", "site-packages", "torch", "triton", "generated", "rocprof")


def _package_dir(name: str) -> list[str]:
    """The folder of a top-level package, without importing it (a source build of torch or
    triton lives outside site-packages)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    locations = list(spec.submodule_search_locations or []) if spec else []
    return [p for p in locations if p]


def group(name: str) -> list[str]:
    """The prefixes and globs of one named group."""
    # Read from what the interpreter knows already: sysconfig (7 M instructions) and tempfile
    # (31 M, with shutil, random and re) are not loaded before the profiled program starts.
    if name == "stdlib":  # where the standard library's Python files are (its frames' files)
        return [getattr(sys, "_stdlib_dir", None) or os.path.dirname(os.__file__)]
    if name == "site-packages":
        found = []
        try:
            found += site.getsitepackages()
        except AttributeError:  # virtualenvs of old Pythons
            pass
        found += [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)]
        # Any installed-package folder, on sys.path or not (a tool's own environment).
        return [p for p in found if p] + ["*/site-packages/*", "*/dist-packages/*"]
    if name in ("torch", "triton"):
        return _package_dir(name)
    if name == "generated":
        # torch.compile's output: inductor's generated modules (and their triton kernels'
        # launchers) in its cache folder (by default <temp dir>/torchinductor_<user>, which the
        # glob matches wherever the temp dir is), triton's own cache.
        found = [os.environ.get("TORCHINDUCTOR_CACHE_DIR"), os.environ.get("TRITON_CACHE_DIR"),
                 os.path.join(os.path.expanduser("~"), ".triton")]
        return [p for p in found if p] + ["*/torchinductor_*/*"]
    if name == "rocprof":
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return [here, *_package_dir("rocpd")]
    raise ValueError(f"--site-filter: unknown group @{name} (groups: "
                     + ", ".join("@" + g for g in GROUPS) + ")")


def _entry(text: str) -> list[str]:
    if text.startswith("@"):
        return group(text[1:])
    if any(ch in text for ch in "*?["):
        return [text]
    return [os.path.abspath(os.path.expanduser(text))]


def _as_prefix(p: str) -> str:
    if any(ch in p for ch in "*?["):
        return p
    return p.rstrip("/") + "/"


def patterns(spec: str | None = None) -> list[str]:
    """The native filter's entries for a --site-filter SPEC (None: the default): library
    prefixes/globs, and user code as '!'-prefixed entries. ValueError names a bad entry."""
    entries = [e.strip() for e in (spec or "").split(",") if e.strip()]
    replace = any(e[0] not in "+-" for e in entries)
    skip: list[str] = []
    keep: list[str] = []
    if not replace:
        for e in DEFAULT.split(","):
            skip += _entry(e)
    for e in entries:
        if e == "none":
            continue
        sign, body = (e[0], e[1:].strip()) if e[0] in "+-" else ("", e)
        if not body:
            raise ValueError(f"--site-filter: empty entry {e!r} (write +PATH, -PATH, @GROUP or a glob)")
        (keep if sign == "-" else skip).extend(_entry(body))
    out = [_as_prefix(p) for p in skip] + ["!" + _as_prefix(p) for p in keep]
    return list(dict.fromkeys(out))

