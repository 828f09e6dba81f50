"""rocpd convert DB... -f FORMAT... : one exporter module per format.

Ours: ``rocpd convert run.db -f csv -o out/run``. ROCm's: ``rocpd convert -i a.db b.db -f csv
pftrace otf2 -d OUTPUT_PATH -o OUTPUT_FILE`` writes OUTPUT_PATH/OUTPUT_FILE_kernel_trace.csv ...,
OUTPUT_PATH/OUTPUT_FILE_results.pftrace and the OTF2 archive OUTPUT_PATH/OUTPUT_FILE_results.otf2
(see :func:`rocpd.cli.rocm_naming` for which form applies). CSV files have the columns of ROCm's
``rocpd convert`` (a Guid column first; ``rocprof run -f csv`` writes rocprofv3's, without).

ROCm's other convert options apply: ``--kernel-rename`` (rocpd.io.kernel_rename),
``--agent-index-value`` (every format), ``--group-by-queue`` (Perfetto and Chrome) and the
Perfetto buffer options (rocpd.export._perfetto_buffer)."""

from __future__ import annotations

import os

import rocpd

from ..errors import RocpdError
from ..export import AGENT_INDEX, find, names
from ..export._perfetto_buffer import BACKENDS, FILL_POLICIES
from . import (
    add_command,
    add_filter_options,
    add_inputs,
    add_kernel_rename,
    add_output_naming,
    filters_of,
    inputs_of,
    output_naming,
    rocm_naming,
)
from .written import wrote

EXAMPLES = """
rocpd convert OUT/run1_results.db -f csv -o csv_out/run1     # csv_out/run1_kernel_trace.csv, ...
rocpd convert OUT/run1_results.db -f chrome -o trace.json
rocpd convert OUT/metrics_results.db -f pftrace -o metrics.pftrace
rocpd convert OUT/run1_results.db -f pftrace -o traces/   # a folder: traces/results.pftrace
rocpd convert -i db1.db db2.db -f csv pftrace otf2 -d out -o two   # ROCm's form: out/two_...
rocpd convert -i db1.db -f pftrace --start 30% --end 100% --group-by-queue --kernel-rename
"""


def add_parser(sub) -> None:
    p = add_command(sub, "convert", "export to rocprofv3 CSV, Chrome JSON, Perfetto, OTF2,"
                    " collapsed stacks or a flame graph", EXAMPLES)
    add_inputs(p)
    known = names()  # the export registry (rocpd/export/<format>.py)
    aliases = ", ".join(f"{a} = {f.name}" for a, f in known.items() if a != f.name)
    p.add_argument("-f", "--output-format", "--format", dest="format", required=True, nargs="+",
                   type=lambda v: v.lower(), choices=sorted(known), metavar="FORMAT",
                   help=f"one or more of {', '.join(sorted(known))} ({aliases})")
    add_output_naming(p, "ours (with positional databases and no -d): csv: file-name prefix"
                      " (out/run -> out/run_kernel_trace.csv) or a folder; otf2: archive directory;"
                      " other formats: the file. ROCm's form: base name of the files (default out)")
    add_kernel_rename(p)
    g = p.add_argument_group("agents (every format)")
    g.add_argument("--agent-index-value", choices=AGENT_INDEX, default=None,
                   help="how devices are numbered: relative: logical node id, absolute: node id"
                        " ignoring cgroups, type-relative: per device type (default: each"
                        " format's own: CSV relative (Agent 1, as rocprofv3's CSV), traces"
                        " type-relative (GPU 0))")
    g = p.add_argument_group("Perfetto (pftrace; --group-by-queue also chrome)")
    g.add_argument("--group-by-queue", action="store_true",
                   help="one GPU track per queue the work was submitted to, instead of per stream")
    g.add_argument("--perfetto-buffer-size", type=int, metavar="KB",
                   help="keep the trace within KB kilobytes by --perfetto-buffer-fill-policy,"
                        " saying how many events were left out (default: no limit, nothing left"
                        " out; ROCm's SDK buffer holds 1 GB)")
    g.add_argument("--perfetto-buffer-fill-policy", choices=FILL_POLICIES, default="discard",
                   help="with --perfetto-buffer-size: discard leaves out the newest events once"
                        " full, ring_buffer the oldest")
    g.add_argument("--perfetto-backend", choices=BACKENDS,
                   help="ROCm's Perfetto SDK transport (default inprocess); our trace is written"
                        " from the database without the SDK, so it is only recorded in the"
                        " trace's config")
    g.add_argument("--perfetto-shmem-size-hint", type=int, metavar="KB",
                   help="ROCm's Perfetto SDK shared-memory hint (default 64 KB); only recorded in"
                        " the trace's config, as --perfetto-backend")
    add_filter_options(p)
    p.set_defaults(run=run)


def _options(args, fmt: str) -> dict:
    """The exporter options of ``fmt`` from ROCm's convert settings, with the filters."""
    out = {**filters_of(args)}
    if fmt in ("csv", "perfetto", "chrome", "otf2") and args.agent_index_value is not None:
        out["agent_index"] = args.agent_index_value
    if fmt == "csv":  # ROCm's rocpd convert columns: Guid first
        out["guid"] = True
    if fmt in ("perfetto", "chrome"):
        out["group_by_queue"] = args.group_by_queue
    if fmt == "perfetto":
        out.update(buffer_size_kb=args.perfetto_buffer_size,
                   buffer_fill_policy=args.perfetto_buffer_fill_policy,
                   backend=args.perfetto_backend, shmem_size_hint_kb=args.perfetto_shmem_size_hint)
    return out


def run(args) -> int:
    formats = list(dict.fromkeys(find(f) for f in args.format))
    rocm = rocm_naming(args) or len(formats) > 1
    with rocpd.connect(*inputs_of(args)) as db:
        if args.kernel_rename:
            from rocpd.io.kernel_rename import rename_kernels

            rename_kernels(db)
        for fmt in formats:
            opts = _options(args, fmt.name)
            if rocm:
                folder, name = output_naming(args)
                os.makedirs(folder, exist_ok=True)
                written = fmt.write_named(db, folder, name, **opts)
            elif args.output_file is None:
                raise RocpdError("rocpd convert: give -o OUTPUT (or -d OUTPUT_PATH)")
            else:
                written = fmt.write_to(db, args.output_file, **opts)
            for path in written:
                wrote(path)
    return 0
