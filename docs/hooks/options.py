"""MkDocs hook: the options reference (options.md) is generated from `rocprof run`'s parser,
which python/rocprof/option_table.py declares: one table, never written twice."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- options: generated from python/rocprof/option_table.py -->"


def _parser() -> argparse.ArgumentParser:
    sys.path[:0] = [str(ROOT / "python"), str(ROOT)]
    from rocprof.cli import run_parser
    from rocprof.cli.help_text import Parser

    p = Parser(prog="rocprof run")
    run_parser.add_parser(p)
    return p


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("%%", "%")


def _names(action: argparse.Action) -> str:
    names = ", ".join(f"`{n}`" for n in action.option_strings) or f"`{action.dest}`"
    if action.metavar:
        names += f" `{action.metavar}`"
    return names


def reference() -> str:
    p = _parser()
    out = []
    for group in p._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        if not actions or group.title in ("positional arguments", "options"):
            continue
        out += [f"## {group.title[0].upper()}{group.title[1:]}", ""]
        if group.description:
            out += [_cell(group.description), ""]
        out += ["| option | what it does |", "|---|---|"]
        out += [f"| {_names(a)} | {_cell(a.help or '')} |" for a in actions]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARK in markdown:
        return markdown.replace(MARK, reference())
    return markdown
