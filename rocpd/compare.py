"""``rocpd.compare`` as scripts and notebooks written against it import it: compare(a, b) lives
in :mod:`rocpd.diff.compare`, and this name is that very module."""

import sys

from .diff import compare

sys.modules[__name__] = compare
