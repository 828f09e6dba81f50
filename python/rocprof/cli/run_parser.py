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

TRACE_HELP = (
    "With no tracing option, rocprof records ROCTx ranges and, where a GPU backend is live, "
    "kernels and memory copies/sets, each with its launching thread and enclosing ROCTx range "
    "(as --kernel-trace --memory-copy-trace). That is the cheapest set that answers which "
    "kernels ran, how long, and from where: the runtime/driver API and synchronisation records "
    "(--runtime-trace, part of --sys-trace) cost far more, since every CUDA call becomes a "
    "record: on an H200 (B2, a small CNN's training step) the default added ~10%, "
    "--sys-trace ~38% and torch.profiler ~33% (benchmarks/RESULTS.md)."
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


def _core_default(settings: str, name: str, fallback: int) -> int:
    """A default the core states (SamplingSettings.DEFAULT_HZ ...): help shows its number."""
    return int(getattr(getattr(_core, settings, None), name, fallback))


def add_parser(p) -> None:
    """The declarations of python/rocprof/option_table.py, in its groups and order."""
    p.epilog = epilog(OUTPUT_HELP, TRACE_HELP, COUNTERS_HELP, examples=EXAMPLES)
    for group in table.GROUPS:
        g = p.add_argument_group(group.title, group.description)
        for option in table.OPTIONS:
            if option.group == group.key:
                _declare(g, option)


def help_of(option: table.Option) -> str:
    """An option's help with the core's numbers in place (`rocprof ctl` shows the same text)."""
    fill = {"{sample_hz}": str(_core_default("SamplingSettings", "DEFAULT_HZ", 1000)),
            "{metrics_hz}": str(_core_default("MetricsSettings", "DEFAULT_HZ", 20)),
            "{metrics_max}": str(_core_default("MetricsSettings", "MAX_HZ", 1000))}
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
        g.add_argument(*option.names, nargs="?", const=table.DEFAULT_RATE, type=int, help=text, **kw)
    elif option.kind == "values":
        if option.names[-1] == "--output-format":
            kw["action"] = _OutputFormats
        g.add_argument(*option.names, nargs="+", help=text, **kw)
    elif option.kind == "target":
        g.add_argument(*option.names, nargs=argparse.REMAINDER, help=text, **kw)
    else:  # value, module
        g.add_argument(*option.names, help=text, **kw)
