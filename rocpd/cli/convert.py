"""rocpd convert DB... --format csv|chrome -o OUT: one exporter module per format."""

from __future__ import annotations

import importlib

from . import add_filter_options, filters_of

FORMATS = {"csv": "csv", "chrome": "chrome", "json": "chrome", "collapsed": "collapsed",
           "flamegraph": "flamegraph", "svg": "flamegraph", "perfetto": "perfetto", "pftrace": "perfetto",
           "otf2": "otf2"}


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="export to rocprofv3 CSV, Chrome JSON, Perfetto, OTF2, collapsed stacks or a flame graph")
    p.add_argument("databases", nargs="+")
    p.add_argument("-f", "--format", required=True, choices=sorted(FORMATS))
    p.add_argument("-o", "--output", required=True,
                   help="csv: file-name prefix (out/run -> out/run_kernel_trace.csv) or a folder"
                        " (out/ -> out/results_kernel_trace.csv); otf2: archive directory;"
                        " other formats: file")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    import rocpd

    mod = importlib.import_module(f"rocpd.export.{FORMATS[args.format]}")
    with rocpd.connect(*args.databases) as db:
        result = mod.write(db, args.output, **filters_of(args))
    for path in result if isinstance(result, list) else [result]:
        print(f"wrote {path}")
    return 0
