"""Flame graph of call-stack samples as a self-contained SVG (no scripts, no network):
width = samples, root at the bottom, a tooltip (<title>) per frame with its share. Takes the
options of rocpd.export.collapsed plus ``title`` and ``width`` (pixels)."""

from __future__ import annotations

import html
import zlib

from ..errors import RocpdError
from ..io.output_file import open_output
from ..summary.samples import collapsed
from .collapsed import options_of

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".svg", "target": "file", "aliases": ["svg"]}

ROW = 16
MIN_PX = 0.5  # narrower frames are dropped from the picture (not from the totals)


def _tree(folded):
    root = {"n": 0, "kids": {}}
    for stack, count in folded.items():
        root["n"] += count
        node = root
        for name in stack.split(";"):
            node = node["kids"].setdefault(name, {"n": 0, "kids": {}})
            node["n"] += count
    return root


def _depth(node) -> int:
    return 1 + max((_depth(k) for k in node["kids"].values()), default=0)


def _color(name: str) -> str:
    h = zlib.crc32(name.encode())
    return f"rgb({205 + h % 50},{80 + (h >> 8) % 120},{30 + (h >> 16) % 40})"


def render(folded, title: str = "Flame graph", width: int = 1200, unit: str = "samples") -> str:
    """The SVG of ``folded`` (stack -> weight); ``unit``: what a weight counts."""
    root = _tree(folded)
    total = root["n"]
    depth = _depth(root)
    height = (depth + 2) * ROW
    scale = width / total
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<text x="{width / 2}" y="{ROW - 3}" text-anchor="middle">{html.escape(title)} '
           f'({total} {unit})</text>']

    def draw(name, node, x, level):
        w = node["n"] * scale
        if w < MIN_PX:
            return
        y = height - (level + 1) * ROW
        pct = 100.0 * node["n"] / total
        label = html.escape(name)
        out.append(f'<g><title>{label} ({node["n"]} {unit}, {pct:.2f}%)</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" '
                   f'fill="{_color(name)}" rx="2"/>')
        chars = int(w / 7)
        if chars >= 3:
            text = name if len(name) <= chars else name[:chars - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{html.escape(text)}</text>')
        out.append("</g>")
        cx = x
        for kid_name, kid in sorted(node["kids"].items()):
            draw(kid_name, kid, cx, level + 1)
            cx += kid["n"] * scale

    draw("all", root, 0.0, 0)
    out.append("</svg>")
    return "\n".join(out)


def write(db, path, *, title: str = "Flame graph", width: int = 1200, **options) -> str:
    folded = collapsed(db, **options_of(options))
    if not folded:
        raise RocpdError("no call-stack samples (was the run made with --sample?)", str(path))
    with open_output(path, encoding="utf-8") as f:
        f.write(render(folded, title=title, width=width))
    return str(path)
