"""The parser of `rocprof run`: its options come from python/rocprof/option_table.py (names as
rocprofv3's, rocprof-sys's for the device metrics, each with what it does and its real
default); here the help around them, with the README's commands as examples."""

from __future__ import annotations

import argparse

from .. import _core
from .. import option_table as table
from ..run_report import output_formats
from . import rocprofv3_options as v3
from .help_text import epilog
from .option_groups import GROUPS

TRACE_HELP = (
    "With no tracing option, rocprof records ROCTx ranges and, where a GPU backend is live, "
    "kernels and memory copies/sets, each with its launching thread and enclosing ROCTx range "
    "(as --kernel-trace --memory-copy-trace). That is the cheapest set that answers which "
    "kernels ran, how long, and from where: the runtime/driver API and synchronisation records "
    "(--runtime-trace, part of --sys-trace) cost far more, since every CUDA call becomes a "
    "record: what each costs is measured in benchmarks/RESULTS.md (B2, B2s)."
)

COUNTERS_HELP = (
    "Hardware counters (--pmc, --sol) are read per kernel dispatch through CUPTI's range "
    "profiler. Collecting them serialises kernels (one runs at a time) and replays each kernel "
    "once per counter pass, as rocprofv3 --pmc and Nsight Compute do: kernel durations and the "
    "run's wall time under --pmc are not those of a normal run, and the database says so "
    "(metadata rocprof.counters.serialized)."
)

OUTPUT_HELP = (
    "The database is DIR/NAME_results.db (default rocprof-output/HOSTNAME/PID_results.db); its "
    "absolute path is printed at exit, with every file --stats and -f write."
)

EXAMPLES = (
    "rocprof run train.py --epochs 1                  # ROCTx ranges, kernels and copies",
    "rocprof run -d rocprof-output -o run1 --stats -S train.py   # named; stats CSVs; summary",
    "rocprof run --sys-trace -- python3 train.py      # any command, as rocprofv3",
    "rocprof run -o timeit -m timeit -n 1000 \"sum(range(100))\"   # a module, as python -m",
    "rocprof run --sample 1000 --sampling-mode wall train.py   # Python call stacks",
    "rocprof run -f csv pftrace -- ./app              # also CSV and a Perfetto trace",
    "rocprof run --process-freq 50 train.py           # GPU/CPU utilisation, memory, power",
    "rocprof run --pmc dram__bytes_read.sum -- ./app  # counters per kernel (NVIDIA)",
    "srun -n 4 rocprof run -o r%rank% -- python3 train.py   # one database per rank",
)


# How `rocprof run` reads the word after a rate option (cli/run.py's split of the command line).
RATE_RULE = ("HZ is a whole number; a word after the option that is not one starts the program "
             "when it names a file or a command on PATH (--sample train.py), else is an error")


def _rate(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"HZ must be a whole number, not {text!r}; a program right after it must name a file "
            "or a command on PATH") from None


def _core_default(settings: str, name: str, fallback: int) -> int:
    """A default the core states (SamplingSettings.DEFAULT_HZ ...): help shows its number."""
    return int(getattr(getattr(_core, settings, None), name, fallback))


def add_parser(p) -> None:
    """The declarations of python/rocprof/option_table.py, in its groups (cli/option_groups.py)
    and order. `--help`
    shows the table's common rows in one screen; `--help-all` every row, with the groups'
    descriptions and the notes on tracing, counters and output."""
    p.epilog = epilog(examples=EXAMPLES[:3])
    p.add_argument("--help-all", action=_HelpAll, help="every option, grouped, with notes")
    hidden = []
    for group in GROUPS:
        g = p.add_argument_group(group.title, group.description)
        for option in table.OPTIONS:
            if option.group == group.key:
                before = len(g._group_actions)
                _declare(g, option)
                if not option.common:
                    hidden += g._group_actions[before:]
    p.format_help = lambda: _brief_help(p, hidden)


def _brief_help(p, hidden: list) -> str:
    """--help: the common options (hidden ones keep their help for completion and --help-all,
    so they are left out only while this text is made)."""
    helps = {a: a.help for a in p._actions}
    groups = {g: g.description for g in p._action_groups}
    for a in p._actions:
        a.help = argparse.SUPPRESS if a in hidden else _first_clause(a.help)
    for g in p._action_groups:
        g.description = None
    try:
        text = argparse.ArgumentParser.format_help(p)
    finally:
        for a, text_of in helps.items():
            a.help = text_of
        for g, description in groups.items():
            g.description = description
    return (f"{text}\n{len(hidden)} more options: rocprof run --help-all (grouped, with notes), "
            "or the manual's options reference (docs/options.md).\n")


def _first_clause(text: str | None) -> str | None:
    """An option's help up to its first `;` or sentence end outside parentheses: --help's
    one-screen form of the line --help-all shows whole."""
    if not text or text == argparse.SUPPRESS:
        return text
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and (c == ";" or text.startswith(". ", i) or text.startswith(": ", i)):
            return text[:i]
    return text


class _HelpAll(argparse.Action):
    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        full = type(parser)(prog=parser.prog, description=parser.description,
                            formatter_class=parser.formatter_class)
        add_parser(full)
        full.epilog = epilog(OUTPUT_HELP, TRACE_HELP, COUNTERS_HELP, examples=EXAMPLES)
        print(argparse.ArgumentParser.format_help(full))
        parser.exit()


def help_of(option: table.Option) -> str:
    """An option's help with the core's numbers in place (`rocprof ctl` shows the same text)."""
    fill = {"{sample_hz}": str(_core_default("SamplingSettings", "DEFAULT_HZ", 1000)),
            "{metrics_hz}": str(_core_default("MetricsSettings", "DEFAULT_HZ", 20)),
            "{metrics_max}": str(_core_default("MetricsSettings", "MAX_HZ", 1000)),
            "{energy_hz}": str(_core_default("MetricsSettings", "ENERGY_HZ", 100)),
            "{gpu_metrics_hz}": str(_core_default("GpuMetricsSettings", "DEFAULT_HZ", 10000)),
            "{gpu_metrics_max}": str(_core_default("GpuMetricsSettings", "MAX_HZ", 200000))}
    text = option.help
    for key, value in fill.items():
        text = text.replace(key, value)
    return text


def _formats_help() -> str:
    """"csv, json (Chrome trace), ... or rocpd (the database itself)": rocpd's export registry."""
    named = [f"{n} ({label})" if label else n for n, label in output_formats().items()]
    return ", ".join(named[:-1]) + " or " + named[-1]


class _OutputFormats(argparse._StoreAction):
    """-f FMT ...: its choices and the {formats} of its help come from rocpd's export registry
    when first read (a -f given, --help, completion), not when the parser is built: most runs
    have no -f, and the registry loads part of rocpd."""

    @property
    def choices(self):
        return tuple(output_formats())

    @choices.setter
    def choices(self, value):
        pass

    @property
    def help(self):
        return self._help.replace("{formats}", _formats_help())

    @help.setter
    def help(self, value):
        self._help = value


def _declare(g, option: table.Option) -> None:
    text = help_of(option)
    kw = dict(option.argparse)
    if "type" in kw:
        kw["type"] = v3.TYPES.get(kw["type"], kw["type"])
    if option.kind == "bool":
        v3.add_bool(g, *option.names, help=text)
    elif option.kind == "switch":
        kw.setdefault("action", "store_true")
        g.add_argument(*option.names, help=text, **kw)
    elif option.kind == "rate":
        g.add_argument(*option.names, nargs="?", const=table.DEFAULT_RATE, type=_rate,
                       help=f"{text}. {RATE_RULE}", **kw)
    elif option.kind == "values":
        if option.names[-1] == "--output-format":
            kw["action"] = _OutputFormats
        g.add_argument(*option.names, nargs="+", help=text, **kw)
    elif option.kind == "target":
        g.add_argument(*option.names, nargs=argparse.REMAINDER, help=text, **kw)
    else:  # value, module
        g.add_argument(*option.names, help=text, **kw)
