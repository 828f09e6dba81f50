"""`rocprof peaks`: the empirical peaks of each GPU here, each resource measured by a kernel that
stresses it (DRAM, L2, tensor cores and CUDA cores per precision: rocprof.peaks), measured once
and cached; `rocpd sol` and the roofline compare with them."""

from __future__ import annotations

import json
import sys

from .help_text import epilog

EXAMPLES = (
    'rocprof peaks              # measure once (cached), print the table',
    'rocprof peaks --force --json   # measure again; the cache as JSON',
)


def add_parser(p) -> None:
    p.epilog = epilog(examples=EXAMPLES)
    p.add_argument("--force", action="store_true", help="measure again even when cached")
    p.add_argument("--json", action="store_true", help="print the cache as JSON")


def run(args) -> int:
    from .. import peaks

    cache = peaks.load()
    if args.force or not cache:
        try:
            cache = peaks.measure_all(force=args.force)
        except (ImportError, RuntimeError) as e:
            print(f"rocprof peaks: cannot measure here ({e}); the measurement needs PyTorch with "
                  "a CUDA device", file=sys.stderr)
            return 1
    print(json.dumps(cache, indent=2) if args.json else peaks.format_table(cache), end="" if not
          args.json else "\n")
    print(f"rocprof peaks: cache {peaks.cache_path()}", file=sys.stderr)
    return 0
