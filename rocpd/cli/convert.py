"""rocpd convert DB... -f FORMAT... : one exporter module per format.

Ours: ``rocpd convert run.db -f csv -o out/run``. ROCm's: ``rocpd convert -i a.db b.db -f csv
pftrace otf2 -d OUTPUT_PATH -o OUTPUT_FILE`` writes OUTPUT_PATH/OUTPUT_FILE_kernel_trace.csv ...,
OUTPUT_PATH/OUTPUT_FILE_results.pftrace and the OTF2 archive OUTPUT_PATH/OUTPUT_FILE_results.otf2
(see :func:`rocpd.cli.rocm_naming` for which form applies)."""

from __future__ import annotations

import importlib
import os

from ..errors import RocpdError
from . import (
    add_filter_options,
    add_inputs,
    add_output_naming,
    filters_of,
    inputs_of,
    output_naming,
    rocm_naming,
)
from .written import wrote

FORMATS = {"csv": "csv", "chrome": "chrome", "json": "chrome", "collapsed": "collapsed",
           "flamegraph": "flamegraph", "svg": "flamegraph", "perfetto": "perfetto", "pftrace": "perfetto",
           "otf2": "otf2"}
# ROCm's naming: OUTPUT_PATH/OUTPUT_FILE_<stem><ext>; csv takes a prefix, otf2 a folder + name.
_ROCM_NAMES = {"perfetto": ".pftrace", "chrome": ".json", "collapsed": ".folded",
               "flamegraph": ".svg"}


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="export to rocprofv3 CSV, Chrome JSON, Perfetto, OTF2, collapsed stacks or a flame graph")
    add_inputs(p)
    p.add_argument("-f", "--format", "--output-format", dest="format", required=True, nargs="+",
                   type=lambda v: v.lower(), choices=sorted(FORMATS), metavar="FORMAT",
                   help=f"one or more of {', '.join(sorted(FORMATS))}")
    add_output_naming(p, "ours (with positional databases and no -d): csv: file-name prefix"
                      " (out/run -> out/run_kernel_trace.csv) or a folder; otf2: archive directory;"
                      " other formats: the file. ROCm's form: base name of the files (default out)")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import rocpd

    formats = list(dict.fromkeys(FORMATS[f] for f in args.format))
    rocm = rocm_naming(args) or len(formats) > 1
    with rocpd.connect(*inputs_of(args)) as db:
        for fmt in formats:
            mod = importlib.import_module(f"rocpd.export.{fmt}")
            if rocm:
                folder, name = output_naming(args)
                os.makedirs(folder, exist_ok=True)
                if fmt == "csv":
                    result = mod.write(db, os.path.join(folder, name), **filters_of(args))
                elif fmt == "otf2":
                    result = mod.write(db, folder, archive_name=f"{name}_results", shared=True,
                                       **filters_of(args))
                else:
                    result = mod.write(db, os.path.join(folder, f"{name}_results{_ROCM_NAMES[fmt]}"),
                                       **filters_of(args))
            elif args.output_file is None:
                raise RocpdError("rocpd convert: give -o OUTPUT (or -d OUTPUT_PATH)")
            else:
                result = mod.write(db, args.output_file, **filters_of(args))
            for path in result if isinstance(result, list) else [result]:
                wrote(path)
    return 0
