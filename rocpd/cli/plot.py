"""rocpd plot DB...: device and host metrics over time (``rocprof run --process-freq``) as a PNG,
one panel per counter and one line per device."""

from __future__ import annotations

import rocpd

from ..io.output_file import write_bytes
from . import add_command, add_filter_options, add_inputs, filters_of, inputs_of
from .written import wrote

EXAMPLES = """
rocpd plot OUT/metrics_results.db -o metrics.png
rocpd plot OUT/metrics_results.db --list
rocpd plot OUT/metrics_results.db -m device_busy_gfx -m cpu_load -o busy.png
"""


def add_parser(sub) -> None:
    p = add_command(sub, "plot", "device/host metrics over time (--process-freq) as a PNG",
                    EXAMPLES)
    add_inputs(p)
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="NAME",
                   help="only this counter (device_busy_gfx, device_power, cpu_load, or a track "
                        "such as 'device_busy_gfx [0]'); repeatable; default all")
    p.add_argument("-o", "--output", default="metrics.png", metavar="PNG",
                   help="the image to write")
    p.add_argument("--list", action="store_true", help="list the counters that have values")
    add_filter_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd.device_metrics import plots as metric_plots
    from rocpd.device_metrics import samples as metrics
    from rocpd.plots import png

    with rocpd.connect(*inputs_of(args)) as db:
        if args.list:
            for name in metrics.names(db):
                print(name)
            return 0
        fig = metric_plots.metrics_over_time(db, args.metrics, **filters_of(args))
        write_bytes(args.output, png(fig))
    wrote(args.output)
    return 0
