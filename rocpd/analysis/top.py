"""The first findings as text, for ``rocprof run -S``: above the analysis itself (it runs
:func:`rocpd.analysis.analyze` and the rules)."""

from __future__ import annotations

from .. import analysis
from ..io.connection import Connection


def _has_gpu_work(db) -> bool:
    return any(db.map(_file_has_gpu_work))


def _file_has_gpu_work(src) -> bool:
    return src.conn.execute("SELECT EXISTS (SELECT 1 FROM rocpd_kernel_dispatch) OR"
                            " EXISTS (SELECT 1 FROM rocpd_memory_copy)").fetchone()[0] == 1


def top_text(databases, n: int = 3) -> str:
    """The ``n`` first findings over ``databases`` as text, for ``rocprof run -S``; never raises
    (a failed analysis is one line, so the summary above it still stands)."""
    try:
        with Connection(*databases) as db:
            # No GPU op anywhere: the caveats are all there is to say, and loading every ROCTx
            # range of a run (a million of them, in a CPU-only run) would only cost memory.
            a = analysis.analyze(db) if _has_gpu_work(db) else analysis.Analysis(
                [], None, "none", dropped=db.dropped_total())
            fs = a.findings()
    except Exception as e:  # noqa: BLE001 - the run's summary must survive a failed analysis
        return f"== TOP FINDINGS ==\n(analysis failed: {type(e).__name__}: {e})"
    shown = fs[:n]
    head = (f"== TOP FINDINGS ({len(shown)} of {len(fs)}; all of them: rocpd analyze DB, "
            "the page: rocpd report DB -o report.html) ==")
    if not shown:
        return head + "\n(none)"
    return head + "\n" + "\n".join(f"{i}. {f.text()}" for i, f in enumerate(shown, 1))
