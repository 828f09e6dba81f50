"""rocpd merge DB... -o OUT.db: one file holding every input's tables, readable as one database."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("merge", help="merge several databases into one file")
    p.add_argument("databases", nargs="+")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--force", action="store_true", help="replace OUTPUT if it exists")
    p.set_defaults(run=run)


def run(args) -> int:
    from rocpd.merge import merge_files

    print(merge_files(args.databases, args.output, overwrite=args.force, progress=True))
    return 0
