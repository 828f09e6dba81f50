"""`rocprof avail` (and `rocprof run -L/--list-avail`, as rocprofv3 names it): the hardware
counters of each GPU here, with descriptions; `--chip` lists a chip's counters from CUPTI's own
tables without a GPU."""

from __future__ import annotations

import json
import re
import sys

from .help_text import epilog

EXAMPLES = (
    'rocprof avail                          # the counters of each GPU here',
    "rocprof avail --chip GH100 --filter dram   # an H100's DRAM counters, no GPU needed",
    'rocprof avail --chip GH100 --submetrics --json',
    "rocprof avail --chip GH100 --gpu-metrics   # what --gpu-metrics samples on an H100/H200",
)


def add_parser(p) -> None:
    p.epilog = epilog(examples=EXAMPLES)
    p.add_argument("--chip", metavar="CHIP",
                   help="list a chip's counters from CUPTI's tables, no GPU needed (GH100 for "
                        "H100/H200, GA100 for A100, AD102, GB100, ...)")
    p.add_argument("--submetrics", action="store_true",
                   help="also list each counter's collectable forms (.sum, .avg.per_second, "
                        ".avg.pct_of_peak_sustained_elapsed, ...)")
    p.add_argument("--filter", metavar="REGEX", help="only counters whose name matches (Python re)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--gpu-metrics", nargs="?", const="default", metavar="SET",
                   help="instead: the metrics `rocprof run --gpu-metrics-set SET` samples on the "
                        "chip (default, compute, memory or CUPTI names) and those it leaves out")


def run(args) -> int:
    if args.gpu_metrics is not None:
        return list_gpu_metrics(args.chip, args.gpu_metrics, args.json)
    return list_counters(args.chip, args.submetrics, args.json, args.filter)


def list_gpu_metrics(chip: str | None, metric_set: str, as_json: bool) -> int:
    """What PM sampling (--gpu-metrics) samples on a chip, from CUPTI's tables."""
    from .. import _core

    try:
        if not hasattr(_core, "gpu_metrics_set"):
            raise RuntimeError("this build has no NVIDIA PM sampling (built without CUPTI headers)")
        chips = [chip] if chip else [d["chip"] for d in _devices(None, False)]
        found = [_core.gpu_metrics_set(c, metric_set) for c in chips]
    except RuntimeError as e:
        hint = "" if chip else "; --chip GH100 answers from CUPTI's tables without a GPU"
        print(f"rocprof avail: --gpu-metrics: {e}{hint}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    for f in found:
        print(f"chip {f['chip']}: --gpu-metrics-set {f['set']} samples {len(f['metrics'])} "
              "metrics in one pass")
        width = max((len(m["key"]) for m in f["metrics"]), default=10)
        for m in f["metrics"]:
            print(f"  {m['key']:<{width}}  {m['units'] or '-':<4} {m['cupti_name']}")
        for line in f["left_out"]:
            print(f"  left out {line}")
    return 0


def _devices(chip: str | None, submetrics: bool) -> list[dict]:
    from .. import _core

    if not hasattr(_core, "counters_devices"):
        raise RuntimeError("this build has no NVIDIA counter support (built without CUPTI headers)")
    if chip:
        return [_core.counters_chip(chip, submetrics)]
    return _core.counters_devices(submetrics)


def list_counters(chip: str | None, submetrics: bool, as_json: bool, pattern: str | None) -> int:
    from rocshared.kernel_metrics import ALIASES

    try:
        rx = re.compile(pattern) if pattern else None
    except re.error as e:
        print(f"rocprof avail: --filter {pattern!r}: {e}", file=sys.stderr)
        return 2
    try:
        devices = _devices(chip, submetrics)
    except RuntimeError as e:
        hint = ("" if chip else "; `rocprof avail --chip GH100` lists a chip's counters from "
                "CUPTI's tables without one")
        print(f"rocprof avail: no GPU counters to list here: {e}{hint}", file=sys.stderr)
        return 1
    for d in devices:
        if rx:
            d["metrics"] = [m for m in d["metrics"] if rx.search(m["name"])]
    if as_json:
        print(json.dumps({"devices": devices, "aliases": {k: v[0] for k, v in ALIASES.items()}},
                         indent=2))
        return 0
    for d in devices:
        where = f"GPU {d['index']}: {d['name']} (chip {d['chip']})" if d["index"] >= 0 else \
            f"chip {d['chip']} (CUPTI's tables, no device)"
        print(f"{where}: {len(d['metrics'])} counters")
        width = max((len(m["name"]) for m in d["metrics"]), default=10)
        for m in d["metrics"]:
            unit = m["units"] or "-"
            print(f"  {m['name']:<{width}}  {m['type']:<10} {unit:<16} {m['description']}")
            for s in m["submetrics"]:
                print(f"      {s}")
    print("\nCollect a counter with a rollup (NAME.sum, .avg, .min, .max) or a submetric "
          "(NAME.sum.per_second, NAME.avg.pct_of_peak_sustained_elapsed; --submetrics lists "
          "them): rocprof run --pmc dram__bytes_read.sum ...")
    print("rocprofv3 names --pmc accepts, and the NVIDIA metric each reads (stored under that name):")
    for k, (metric, what) in ALIASES.items():
        print(f"  {k:<30} {metric:<52} {what}")
    return 0
