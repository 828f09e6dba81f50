"""Cross-rank analysis (core: :func:`analyze` and :class:`RankReport`), its tables, text and heat
map. ``rocpd.ranks.analyze(db)`` is the entry point notebooks use."""

from .core import COLLECTIVE_REGEX, RankReport, analyze

__all__ = ["COLLECTIVE_REGEX", "RankReport", "analyze"]
