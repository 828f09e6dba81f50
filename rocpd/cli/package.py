"""rocpd package -i DB... [-d NAME] [--consolidate [--copy]]: ROCm's index.yaml over many databases
(see :mod:`rocpd.io.package`); every rocpd command and ``rocpd.connect`` then take the index file or
the .rpdb folder as one input."""

from __future__ import annotations

import os

from . import add_command, add_inputs, inputs_of

EXAMPLES = """
rocpd package RANKS/*.db -d job                 # job.rpdb/index.yaml naming them
rocpd package RANKS/*.db -c --copy -d job       # copies them into job.rpdb/ too
rocpd summary job.rpdb                          # any command reads the package
"""


def add_parser(sub) -> None:
    p = add_command(sub, "package", "write an index.yaml naming many databases (ROCm's .rpdb)",
                    EXAMPLES)
    add_inputs(p)
    p.add_argument("-d", "--output-path", metavar="OUTPUT_PATH",
                   help="folder of the package (.rpdb is appended); default: the current folder,"
                        " or rocpd-<date>.rpdb with --consolidate")
    p.add_argument("-c", "--consolidate", action="store_true",
                   help="move the databases into the package folder")
    p.add_argument("--copy", action="store_true", help="with --consolidate: copy instead of move")
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd.io.make_package import package

    path = package(inputs_of(args), args.output_path, consolidate=args.consolidate, copy=args.copy)
    print(f"rocpd package created at: {os.path.abspath(path)}")
    return 0
