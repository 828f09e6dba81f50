"""rocpd pcsamples DB...: PC samples from the top kernels down to their top source lines and
instructions, with stall reasons (rocprof run --pc-sampling)."""

from __future__ import annotations

import rocpd

from ..errors import RocpdError
from . import add_command

EXAMPLES = """
rocpd pcsamples OUT/host/123_results.db
rocpd pcsamples OUT/ --kernel hot_loop --source
rocpd pcsamples OUT/ --top 5 --lines 10 --instructions 5
"""


def add_parser(sub) -> None:
    p = add_command(sub, "pcsamples", "PC samples: top kernels, their hot lines and instructions "
                    "with stall reasons", EXAMPLES)
    p.add_argument("databases", nargs="+", help="files, globs or directories")
    p.add_argument("-n", "--top", type=int, default=5, metavar="N", help="kernels shown")
    p.add_argument("--lines", type=int, default=10, metavar="N", help="source lines per kernel")
    p.add_argument("--instructions", type=int, default=5, metavar="N",
                   help="instructions per kernel")
    p.add_argument("--kernel", metavar="NAME", help="only this kernel (display or mangled name)")
    p.add_argument("--source", action="store_true",
                   help="also print the kernel's source with each line's share of its samples")
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd import pc_sampling
    from rocpd.pc_sampling import source

    with rocpd.connect(*args.databases) as db:
        if not pc_sampling.has_pc_samples(db):
            raise RocpdError("no PC samples in these databases (record them with "
                             "`rocprof run --pc-sampling ...`)")
        print(source.summary_text(db, top=0).splitlines()[0])
        kernels = pc_sampling.top_kernels(db, limit=None)
        hint = pc_sampling.no_line_hint(db)
        if args.kernel:
            kernels = kernels[kernels["name"] == args.kernel]
            if kernels.empty:
                kernels = pc_sampling.top_kernels(db, limit=None)
                names = pc_sampling.pc_samples(db, kernel=args.kernel)
                if names.empty:
                    raise RocpdError(f"no PC samples of kernel {args.kernel!r} (kernels with samples: "
                                     f"{', '.join(kernels['name'].head(5))})")
                kernels = kernels[kernels["name"] == names["name"].iloc[0]]
        for k in kernels.head(args.top).itertuples():
            print(f"\n{k.percent:6.1f}% {k.samples:9d}  {k.name}  (top stall: {k.top_stall})")
            for r in pc_sampling.top_lines(db, k.name, limit=args.lines).itertuples():
                where = (f"{r.source_file}:{int(r.line)}" if r.line == r.line and r.line is not None
                         else f"(no line info: {hint})")
                print(f"  {r.percent:6.1f}% {r.samples:9d}  {where}  (top stall: {r.top_stall})")
            print("  instructions:")
            for r in pc_sampling.top_instructions(db, k.name, limit=args.instructions).itertuples():
                ins = f" {r.instruction}" if isinstance(r.instruction, str) else ""
                print(f"    {r.percent:6.1f}% {r.samples:9d}  pc+{int(r.pc_offset):#06x}{ins}  "
                      f"{r.stalls}")
            if args.source:
                print()
                print(source.listing(db, k.name), end="")
    return 0
