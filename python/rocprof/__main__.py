"""`python -m rocprof` and the `rocprof` console script."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from .cli import dispatch

    return dispatch(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
