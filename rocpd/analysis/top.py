"""The first findings as text, for ``rocprof run -S``: above the analysis itself (it runs
:func:`rocpd.analysis.analyze` and the rules)."""

from __future__ import annotations

from .. import analysis
from ..io.connection import Connection

# A run without GPU work is analysed from its ROCTx ranges and samples, every range loaded; past
# this many ranges (a million of them in one CPU-only run) -S gives the caveats alone and leaves
# the analysis to `rocpd analyze`, whose user asked for it.
CPU_RANGES_MAX = 200_000


def _has_gpu_work(db) -> bool:
    return any(db.map(_file_has_gpu_work))


def _file_has_gpu_work(src) -> bool:
    return src.conn.execute("SELECT EXISTS (SELECT 1 FROM rocpd_kernel_dispatch) OR"
                            " EXISTS (SELECT 1 FROM rocpd_memory_copy)").fetchone()[0] == 1


def _file_regions(src) -> int:
    return int(src.conn.execute("SELECT COUNT(*) FROM rocpd_region").fetchone()[0])


def top_text(databases, n: int = 3, how: str = "rocpd analyze DB") -> str:
    """The ``n`` first findings over ``databases`` as text, for ``rocprof run -S``; never raises
    (a failed analysis is one line, so the summary above it still stands). ``how``: the
    command that shows every finding."""
    note = ""
    try:
        with Connection(*databases) as db:
            if _has_gpu_work(db) or sum(db.map(_file_regions)) <= CPU_RANGES_MAX:
                a = analysis.analyze(db)
            else:
                a = analysis.Analysis([], None, "none", **analysis.drop_counts(db))
                note = (f"\n(more than {CPU_RANGES_MAX:,} ROCTx ranges and no GPU work: the phases,"
                        f" steps and sampled lines are left to {how})")
            fs = a.findings()
    except Exception as e:  # noqa: BLE001 - the run's summary must survive a failed analysis
        return f"== TOP FINDINGS ==\n(analysis failed: {type(e).__name__}: {e})"
    shown = fs[:n]
    head = (f"== TOP FINDINGS ({len(shown)} of {len(fs)}; all of them: {how}, "
            f"the page: {how.replace('rocpd analyze', 'rocpd report', 1)} -o report.html) ==")
    if not shown:
        return head + "\n(none)" + note
    return head + "\n" + "\n".join(f"{i}. {f.text()}" for i, f in enumerate(shown, 1)) + note
