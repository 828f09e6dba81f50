"""``rocpd.stats`` as scripts and notebooks written against it import it: the summary tables live
in :mod:`rocpd.summary.stats`, and this name is that very module."""

import sys

from .summary import stats

sys.modules[__name__] = stats
