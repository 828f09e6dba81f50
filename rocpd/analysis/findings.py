"""Findings: rules that turn an :class:`~rocpd.analysis.Analysis` into ranked, plain-language
statements with their evidence and a suggestion.

Each rule is a function ``rule(analysis) -> list[Finding]`` in ``rocpd.analysis.rules.RULES``; a
rule fires only on numbers that show its pattern (thresholds named there, so that tests and
users can read them).
Findings are ranked by ``score``, the share of the GPU's time at stake (idle time the pattern
causes, time a kind of work takes); caveats (dropped records, nothing to analyse) come first.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Finding:
    rule: str
    title: str
    suggestion: str
    score: float = 0.0
    evidence: list[str] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)  # Python lines, file:line as recorded
    level: str = "issue"  # "caveat" (read the rest with it in mind), "issue", "info"

    @property
    def severity(self) -> str:
        if self.level != "issue":
            return self.level
        return "high" if self.score >= 0.25 else "medium" if self.score >= 0.10 else "low"

    def text(self) -> str:
        lines = [f"[{self.severity}] {self.title}"]
        lines += [f"    - {e}" for e in self.evidence]
        lines.append(f"    → {self.suggestion}")
        return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100.0 * x:.0f} %" if x >= 0.01 or x == 0 else f"{100.0 * x:.1f} %"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns < 1e9 else f"{ns / 1e9:.2f} s"


def _us(ns: float) -> str:
    return f"{ns / 1e3:.1f} µs"


def evaluate(a) -> list[Finding]:
    from .rules import RULES

    found = [f for rule in RULES for f in rule(a)]
    order = {"caveat": 0, "issue": 1, "info": 2}
    return sorted(found, key=lambda f: (order[f.level], -f.score))


def _has_gpu_work(db) -> bool:
    return any(db.map(_file_has_gpu_work))


def _file_has_gpu_work(src) -> bool:
    return src.conn.execute("SELECT EXISTS (SELECT 1 FROM rocpd_kernel_dispatch) OR"
                            " EXISTS (SELECT 1 FROM rocpd_memory_copy)").fetchone()[0] == 1


def top_text(databases, n: int = 3) -> str:
    """The ``n`` first findings over ``databases`` as text, for ``rocprof run -S``; never raises
    (a failed analysis is one line, so the summary above it still stands)."""
    import rocpd

    from . import Analysis, analyze

    try:
        with rocpd.connect(*databases) as db:
            # No GPU op anywhere: the caveats are all there is to say, and loading every ROCTx
            # range of a run (a million of them, in a CPU-only run) would only cost memory.
            a = analyze(db) if _has_gpu_work(db) else Analysis([], None, "none",
                                                                dropped=db.dropped_total())
            fs = a.findings()
    except Exception as e:  # noqa: BLE001 - the run's summary must survive a failed analysis
        return f"== TOP FINDINGS ==\n(analysis failed: {type(e).__name__}: {e})"
    shown = fs[:n]
    head = (f"== TOP FINDINGS ({len(shown)} of {len(fs)}; all of them: rocpd analyze DB, "
            "the page: rocpd report DB -o report.html) ==")
    if not shown:
        return head + "\n(none)"
    return head + "\n" + "\n".join(f"{i}. {f.text()}" for i, f in enumerate(shown, 1))
