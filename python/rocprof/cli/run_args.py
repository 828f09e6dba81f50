"""`rocprof run`'s own options read straight from the option table (option_table.py), the way
the argparse parser built from the same table (run_parser.py) reads them, for the command lines
runs have: exact option names, `--name=value`, values that do not start with '-'.

Building that parser, with argparse, its regular expressions and gettext's lookups, cost more
than the rest of the launcher before the program starts (B7). Whatever this reader does not
know for certain it leaves to argparse, which reads it or says what is wrong: --help, an
abbreviation (`--sys`), `-dDIR`, an unknown option, a bad value, and the options that take
several values (-f, --pmc, --preload), where the rules of where a list ends are argparse's.
tests/unit/cli/test_run_args.py holds the two readers to the same namespaces over lines made
from the table.
"""

from __future__ import annotations

from types import SimpleNamespace

from .. import option_table as table
from . import rocprofv3_options as v3


class _ForArgparse(Exception):
    """A form this reader leaves to argparse."""


def namespace(own: list[str]) -> SimpleNamespace | None:
    """What argparse makes of `rocprof run OWN` (OWN: split_argv's options part), without the
    target; None where argparse must read the line."""
    try:
        return _read(own)
    except (_ForArgparse, ValueError, TypeError):
        return None


_SPELLINGS: dict[str, table.Option] = {}


def _option(name: str) -> table.Option:
    if not _SPELLINGS:
        _SPELLINGS.update((n, o) for o in table.OPTIONS if o.kind != "target" for n in o.names)
    option = _SPELLINGS.get(name)
    if option is None:
        raise _ForArgparse(name)
    return option


def _default(option: table.Option):
    """The option's value when it is not given, as run_parser declares it."""
    if option.kind == "bool":
        return None  # not given (rocprofv3_options.add_bool)
    if option.kind == "switch":
        return option.argparse.get("default", option.argparse.get("action") == "store_false")
    default = option.argparse.get("default")
    if isinstance(default, str) and "type" in option.argparse:
        return _typed(option, default)  # argparse runs string defaults through the type
    return list(default) if isinstance(default, list) else default


def _typed(option: table.Option, text: str):
    kind = option.argparse.get("type")
    value = v3.TYPES.get(kind, kind)(text) if kind is not None else text
    return value


def _value(option: table.Option, text: str):
    value = _typed(option, text)
    if "choices" in option.argparse and value not in option.argparse["choices"]:
        raise _ForArgparse(text)
    return value


def _read(own: list[str]) -> SimpleNamespace:
    values = {"command": "run", "target": []}
    for option in table.OPTIONS:
        if option.kind != "target":
            values[option.dest] = _default(option)
    i = 0
    while i < len(own):
        token = own[i]
        i += 1
        explicit = None
        if token.startswith("--") and "=" in token:
            token, explicit = token.split("=", 1)
        option = _option(token)
        following = own[i] if i < len(own) and not own[i].startswith("-") else None
        action = option.argparse.get("action")
        if option.kind == "switch":
            if explicit is not None:
                raise _ForArgparse(token)
            values[option.dest] = (action or "store_true") == "store_true"
        elif option.kind in ("bool", "rate"):  # an optional value
            if explicit is None and following is not None:
                explicit = following
                i += 1
            if option.kind == "bool":
                value = True if explicit is None else v3.parse_bool(explicit)
            else:
                value = table.DEFAULT_RATE if explicit is None else int(explicit)
            values[option.dest] = value
        elif option.kind in ("value", "module"):
            if explicit is None:
                if following is None:
                    raise _ForArgparse(token)
                explicit = following
                i += 1
            value = _value(option, explicit)
            if action == "append":
                values[option.dest] = [*values[option.dest], value]
            elif action is None:
                values[option.dest] = value
            else:
                raise _ForArgparse(token)
        else:  # several values (-f, --pmc, --preload)
            raise _ForArgparse(token)
    return SimpleNamespace(**values)
