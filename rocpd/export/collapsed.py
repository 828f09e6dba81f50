"""Collapsed ("folded") stacks: one line ``outer;...;inner COUNT`` per unique stack, the input
of flamegraph.pl, speedscope and inferno. Options: ``lines`` (frames per line, not function),
``by_thread`` (a root frame per thread), and the sample filters of rocpd.summary.samples.sample_rows
(``window``, ``roctx_range``, ``tid``, ``pid``)."""

from __future__ import annotations

from ..errors import RocpdError
from ..io.output_file import open_output
from ..summary.samples import collapsed

# What this exporter is (rocpd.export.formats reads it without importing the module).
FORMAT = {"suffix": ".folded", "target": "file"}

_FILTERS = ("window", "roctx_range", "tid", "pid", "lines", "by_thread")


def options_of(options: dict) -> dict:
    """The options rocpd.summary.samples understands; others (kernel filters of `rocpd convert`) are
    refused rather than silently ignored."""
    out = {}
    for k, v in options.items():
        if v is None:
            continue
        if k not in _FILTERS:
            raise RocpdError(f"option not supported for call-stack exports: {k}")
        if k == "pid" and isinstance(v, (list, tuple)):
            if len(v) != 1:
                raise RocpdError("call-stack exports take one --pid")
            v = v[0]
        out[k] = v
    return out


def write(db, path, **options) -> str:
    folded = collapsed(db, **options_of(options))
    if not folded:
        raise RocpdError("no call-stack samples (was the run made with --sample?)", str(path))
    with open_output(path, encoding="utf-8") as f:
        for stack, count in sorted(folded.items()):
            f.write(f"{stack} {count}\n")
    return str(path)
