"""ROCm's rocpd *package*: an ``index.yaml`` that names many databases, optionally inside a
``<name>.rpdb`` folder, so a multi-process run is opened (and moved around) as one thing.

The index holds, under ``rocprofiler-sdk: rocpd:``, ``rocpd_package_version`` ('1.0'), ``path``
('.') and ``files``: one path (a string) or several (a list), relative to the index's folder,
globs allowed. ``rocpd.connect``, every ``-i``/positional input and ``rocpd package -i`` accept an
index file or a ``.rpdb`` folder (one without an index is searched for ``*.db``).

PyYAML is used when installed; without it the small subset ROCm writes is read and written here.
"""

from __future__ import annotations

import glob
import os

from ..errors import RocpdError
from .output_file import write_text

PACKAGE_VERSION = "1.0"
INDEX_NAME = "index.yaml"


def is_index(path: str) -> bool:
    return str(path).endswith((".yaml", ".yml")) and os.path.isfile(path)


def is_package_dir(path: str) -> bool:
    return str(path).rstrip(os.sep).endswith(".rpdb") and os.path.isdir(path)


def _load(text: str) -> dict:
    try:
        import yaml
    except ImportError:
        return _mini_load(text)
    return yaml.safe_load(text) or {}


def _scalar(v: str):
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1].replace("''", "'") if v[0] == "'" else v[1:-1]
    return v


def _mini_load(text: str) -> dict:
    """Block mappings, block lists ('- x', at or below the key's indent) and plain/quoted scalars:
    what yaml.safe_dump writes for an index."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    last_key: tuple[dict, str] | None = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if body.startswith("- "):
            if last_key is None:
                raise ValueError("list item outside a mapping")
            owner, key = last_key
            if not isinstance(owner.get(key), list):
                owner[key] = []
            owner[key].append(_scalar(body[2:]))
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        key, _, value = body.partition(":")
        key = _scalar(key)
        if value.strip():
            parent[key] = _scalar(value)
        else:
            parent[key] = {}
            stack.append((indent, parent[key]))
        last_key = (parent, key)
    return root


def _dump(meta: dict) -> str:
    try:
        import yaml
    except ImportError:
        pass
    else:
        return yaml.safe_dump(meta, default_flow_style=False)
    r = meta["rocprofiler-sdk"]["rocpd"]
    files = r["files"]
    lines = ["rocprofiler-sdk:", "  rocpd:"]
    if isinstance(files, list):
        lines += ["    files:"] + [f"    - {_quote(f)}" for f in files]
    else:
        lines.append(f"    files: {_quote(files)}")
    lines += [f"    path: {_quote(r['path'])}",
              f"    rocpd_package_version: '{r['rocpd_package_version']}'"]
    return "\n".join(lines) + "\n"


def _quote(s: str) -> str:
    plain = s == "." or (bool(s) and s[0] not in "-.'\"" and all(c.isalnum() or c in "._/-+" for c in s))
    return s if plain else "'" + s.replace("'", "''") + "'"


def read_index(path: str) -> list[str]:
    """Database paths an index file (or a .rpdb folder) names, globs expanded, in index order."""
    if os.path.isdir(path):
        index = os.path.join(path, INDEX_NAME)
        if not os.path.isfile(index):
            return sorted(glob.glob(os.path.join(path, "*.db")))
        path = index
    try:
        with open(path) as fh:
            meta = _load(fh.read())
        files = meta["rocprofiler-sdk"]["rocpd"].get("files", [])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise RocpdError(f"not a rocpd package index ({type(e).__name__}: {e}); expected"
                         " 'rocprofiler-sdk: rocpd: files:' as `rocpd package` writes", path) from None
    base = os.path.dirname(os.path.abspath(path))
    out: list[str] = []
    for f in [files] if isinstance(files, str) else list(files or []):
        full = f if os.path.isabs(f) else os.path.join(base, f)
        out.extend(sorted(glob.glob(full)) if any(c in full for c in "*?[") else [full])
    return out


def write_index(db_files, out_dir: str) -> str:
    """Write ``out_dir/index.yaml`` naming ``db_files`` relative to ``out_dir``; returns its path."""
    os.makedirs(out_dir, exist_ok=True)
    rel = [os.path.relpath(os.path.abspath(f), os.path.abspath(out_dir)) for f in db_files]
    meta = {"rocprofiler-sdk": {"rocpd": {
        "rocpd_package_version": PACKAGE_VERSION, "path": ".",
        "files": rel if len(rel) != 1 else rel[0]}}}
    path = os.path.join(out_dir, INDEX_NAME)
    write_text(path, _dump(meta))
    return path
