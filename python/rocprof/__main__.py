"""`python -m rocprof` and the `rocprof` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from . import start_up

    start_up.begin()  # before the CLI's imports (start_up.py)
    from .cli import dispatch

    return dispatch(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
