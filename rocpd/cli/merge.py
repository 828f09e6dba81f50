"""rocpd merge DB... -o OUT.db: one file holding every input's tables, readable as one database.

ROCm's form: ``rocpd merge -i a.db b.db [-d OUTPUT_PATH] [-o NAME]`` writes OUTPUT_PATH/NAME.db
(default rocpd-output-data/merged.db), replacing a previous one."""

from __future__ import annotations

import os

from ..io.merge import merge_files
from . import add_command, add_inputs, add_output_naming, inputs_of, output_naming, rocm_naming
from .written import wrote

EXAMPLES = """
rocpd merge RANKS/*.db -o all_ranks.db
rocpd merge -i rank0.db rank1.db -d merged -o job     # ROCm's form: merged/job.db
"""


def add_parser(sub) -> None:
    p = add_command(sub, "merge", "merge several databases into one file", EXAMPLES)
    add_inputs(p)
    add_output_naming(p, "ours (positional databases): the merged file; ROCm's form: its base"
                      " name (default merged)")
    p.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    p.set_defaults(run=run)


def run(args) -> int:
    out, force = args.output_file, args.force
    if rocm_naming(args):
        folder, name = output_naming(args, default_file="merged")
        out = os.path.join(folder, name if name.endswith(".db") else f"{name}.db")
        os.makedirs(folder, exist_ok=True)
        force = True  # ROCm replaces a previous merge of the same name
    wrote(merge_files(inputs_of(args), out, overwrite=force, progress=True))
    return 0
