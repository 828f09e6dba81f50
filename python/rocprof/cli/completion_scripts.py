"""Shell completion scripts for `rocprof` and `rocpd`, read off their argparse parsers: every
visible subcommand, option, option choice and whether an option takes a value comes from the
parsers themselves (hidden aliases, help=SUPPRESS, are accepted but never offered), so the
scripts follow whatever options a version has. The scripts hold the result as data: completing
a word starts no Python."""

from __future__ import annotations

import argparse
import dataclasses

from rocshared.version import __version__

from . import build_parser as rocprof_parser


@dataclasses.dataclass
class Option:
    names: list[str]
    value: str            # none | one | optional | many
    choices: list[str]
    metavar: str
    help: str
    repeat: bool


@dataclasses.dataclass
class Level:
    """One command or subcommand: `rocprof run`, `rocpd summary`."""
    path: list[str]
    help: str = ""
    options: list[Option] = dataclasses.field(default_factory=list)
    subcommands: list[Level] = dataclasses.field(default_factory=list)
    rest: bool = False    # a REMAINDER positional: from the first positional on, the program's
    words: list[str] = dataclasses.field(default_factory=list)  # a positional's choices


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    try:
        text = parser._get_formatter()._expand_help(action)
    except (TypeError, ValueError, KeyError):
        text = action.help or ""
    return " ".join(text.split())


def _choices(action: argparse.Action) -> list[str]:
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return [str(c) for c in action.choices if str(c) and not any(ch.isspace() for ch in str(c))]
    if action.metavar == "BOOL" or getattr(action.type, "__name__", "") == "BOOL":
        return ["true", "false"]
    return []


def _value(action: argparse.Action) -> str:
    n = action.nargs
    if n == 0:
        return "none"
    if n is None or n == 1:
        return "one"
    if n == argparse.OPTIONAL:
        return "optional"
    return "many"


def walk(parser: argparse.ArgumentParser, path: list[str], help_text: str = "") -> Level:
    level = Level(path=path, help=help_text)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in action._choices_actions}
            seen: set[int] = set()
            for name, sub in action.choices.items():  # a name's aliases follow it: skipped
                if id(sub) in seen or helps.get(name) == argparse.SUPPRESS:
                    continue
                seen.add(id(sub))
                level.subcommands.append(walk(sub, [*path, name], " ".join((helps.get(name) or "").split())))
        elif action.option_strings:
            if action.help == argparse.SUPPRESS:
                continue
            metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
            level.options.append(Option(
                names=list(action.option_strings), value=_value(action), choices=_choices(action),
                metavar=metavar, help=_help(parser, action),
                repeat=isinstance(action, (argparse._AppendAction, argparse._ExtendAction,
                                           argparse._CountAction))))
        elif action.nargs == argparse.REMAINDER:
            level.rest = True
        elif action.help != argparse.SUPPRESS:
            level.words += _choices(action)
    return level


def levels() -> list[Level]:
    from rocpd.cli import build_parser as rocpd_parser

    return [walk(rocprof_parser(), ["rocprof"]), walk(rocpd_parser(), ["rocpd"])]


def _all(roots: list[Level]):
    for root in roots:
        yield root
        yield from _all(root.subcommands)


def script(shell: str) -> str:
    roots = levels()
    return bash(roots) if shell == "bash" else zsh(roots)


# ---- bash ---------------------------------------------------------------------------------

def _sh(text: str) -> str:
    """A double-quoted shell word."""
    return '"' + "".join("\\" + c if c in '"$`\\' else c for c in text) + '"'


def bash(roots: list[Level]) -> str:
    level_cases, choice_cases = [], []
    for level in _all(roots):
        key = " ".join(level.path)
        names = [n for o in level.options for n in o.names]
        of = {kind: " ".join(n for o in level.options if o.value == kind for n in o.names)
              for kind in ("one", "optional", "many")}
        level_cases.append(
            f"        {_sh(key)}) subs={_sh(' '.join(s.path[-1] for s in level.subcommands))}"
            f" words={_sh(' '.join(level.words))} opts={_sh(' '.join(names))} one={_sh(' ' + of['one'] + ' ')}"
            f" optional={_sh(' ' + of['optional'] + ' ')} many={_sh(' ' + of['many'] + ' ')}"
            f" rest={1 if level.rest else 0} ;;")
        for o in level.options:
            if o.choices:
                for n in o.names:
                    choice_cases.append(f"        {_sh(key + '|' + n)}) choices={_sh(' '.join(o.choices))} ;;")
    return _BASH.format(version=__version__, levels="\n".join(level_cases),
                        choices="\n".join(choice_cases),
                        commands=" ".join(r.path[0] for r in roots))


_BASH = r"""# bash completion for rocprof and rocpd, written by `rocprof completion bash` (rocprof {version})
# from their argument parsers; write it again after an upgrade.

_rocprof_level() {{
    subs= words= opts= one= optional= many= rest=0
    case "$1" in
{levels}
    esac
}}

_rocprof_choices() {{
    choices=
    case "$1|$2" in
{choices}
    esac
}}

_rocprof_complete() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} path=${{COMP_WORDS[0]##*/}} word last= i=1 ended=0 eq=
    local subs words opts one optional many rest choices prev=${{COMP_WORDS[COMP_CWORD-1]}} k
    # bash splits `--option=value` into three words: `--option`, `=`, `value`.
    if [[ $cur == = ]]; then cur= eq==; fi
    [[ $prev == = ]] && prev=${{COMP_WORDS[COMP_CWORD-2]}} && [[ -z $eq ]] && k=1
    while (( i < COMP_CWORD )); do
        word=${{COMP_WORDS[i]}}
        _rocprof_level "$path"
        if (( ended )); then
            :
        elif [[ $word == -- ]]; then
            (( rest )) && return 0  # the program's own arguments: file names
            ended=1
        elif [[ $word == -* ]]; then
            last=$word
            if [[ ${{COMP_WORDS[i+1]}} == = ]]; then
                (( i += 2 ))
            elif [[ $one == *" $word "* ]]; then
                (( i++ ))
            fi
        elif [[ $word != = ]]; then
            choices=
            [[ -n $last ]] && _rocprof_choices "$path" "$last"
            if [[ -n $choices && " $many $optional " == *" $last "* && " $choices " == *" $word "* ]]; then
                :  # one more value of the option before it (-f csv json)
            elif [[ -n $subs && " $subs " == *" $word "* ]]; then
                path="$path $word"
                last=
            else
                (( rest )) && return 0  # the script: what follows is its own
                last=
            fi
        fi
        (( i++ ))
    done
    _rocprof_level "$path"
    (( ended )) && return 0
    if [[ $prev == -* && ( -n $eq || -n $k || $one == *" $prev "* ) ]]; then
        _rocprof_choices "$path" "$prev"
        [[ -n $choices ]] && COMPREPLY=($(compgen -P "$eq" -W "$choices" -- "$cur"))
        return 0  # no choices: file names
    fi
    if [[ $prev == -* && $optional == *" $prev "* && -n $cur && $cur != -* ]]; then
        _rocprof_choices "$path" "$prev"
        [[ -n $choices ]] && COMPREPLY=($(compgen -W "$choices" -- "$cur"))
        (( ${{#COMPREPLY[@]}} )) && return 0
    fi
    if [[ -n $last && $many == *" $last "* && $cur != -* ]]; then
        _rocprof_choices "$path" "$last"
        [[ -n $choices ]] && COMPREPLY=($(compgen -W "$choices" -- "$cur"))
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n $subs || -n $words ]]; then
        COMPREPLY=($(compgen -W "$subs $words" -- "$cur"))
    fi
    return 0
}}

complete -o default -F _rocprof_complete {commands}
"""


# ---- zsh ----------------------------------------------------------------------------------

def _fn(level: Level) -> str:
    return "_rocprof_l_" + "_".join(p.replace("-", "_") for p in level.path)


def _q(text: str) -> str:
    """A single-quoted zsh word."""
    return "'" + text.replace("'", "'\\''") + "'"


def _desc(text: str) -> str:
    """An option's description inside _arguments' [...]: its first sentence, brackets escaped."""
    first = text.split(". ")[0].split("; ")[0]
    if len(first) > 90:
        first = first[:87].rstrip() + "..."
    return first.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _spec(o: Option, name: str) -> str:
    exclusive = "*" if o.repeat else (f"({' '.join(o.names)})" if len(o.names) > 1 else "")
    message = o.metavar.replace(":", "\\:") or "value"
    action = ("(" + " ".join(c.replace(" ", "\\ ").replace("(", "\\(").replace(")", "\\)")
                             for c in o.choices) + ")") if o.choices else "_files"
    long = name.startswith("--")
    if o.value == "none":
        return _q(f"{exclusive}{name}[{_desc(o.help)}]")
    if o.value == "optional":  # rocprofv3's `--stats` / `--stats=false`
        return _q(f"{exclusive}{name}{'=-' if long else '-'}[{_desc(o.help)}]::{message}:{action}")
    return _q(f"{exclusive}{name}{'=' if long else '+'}[{_desc(o.help)}]:{message}:{action}")


def _zsh_level(level: Level) -> str:
    specs = [_spec(o, n) for o in level.options for n in o.names]
    lines = [f"{_fn(level)}() {{"]
    if level.subcommands:
        subs = " ".join(_q(f"{s.path[-1]}:{s.help}".replace("\\", "\\\\")) for s in level.subcommands)
        cases = "\n".join(f"                {_q(s.path[-1])}) {_fn(s)} ;;" for s in level.subcommands)
        lines += ["    local curcontext=$curcontext state line ret=1",
                  "    _arguments -C -s -S \\",
                  *[f"        {s} \\" for s in specs],
                  "        '1: :->command' '*:: :->argument' && ret=0",
                  "    case $state in",
                  f"        command) local -a subs; subs=({subs}); _describe -t commands command subs && ret=0 ;;",
                  "        argument) case $line[1] in",
                  cases,
                  "            esac ;;",
                  "    esac",
                  "    return ret"]
    else:
        tail = ("'*:: :_files'" if level.rest else
                _q(f"1: :({' '.join(level.words)})") if level.words else "'*: :_files'")
        lines += ["    _arguments -s -S \\", *[f"        {s} \\" for s in specs], f"        {tail}"]
    lines.append("}")
    return "\n".join(lines)


def zsh(roots: list[Level]) -> str:
    commands = " ".join(r.path[0] for r in roots)
    functions = "\n\n".join(_zsh_level(level) for level in _all(roots))
    dispatch = "\n".join(f"        {_q(r.path[0])}) {_fn(r)} ;;" for r in roots)
    return f"""#compdef {commands}
# zsh completion for rocprof and rocpd, written by `rocprof completion zsh` (rocprof {__version__})
# from their argument parsers; write it again after an upgrade. As a file named _rocprof on
# $fpath (before compinit), or sourced after compinit.

{functions}

_rocprof() {{
    case $service in
{dispatch}
    esac
}}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _rocprof "$@"
else
    compdef _rocprof {commands}
fi
"""
