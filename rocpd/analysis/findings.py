"""Findings: rules that turn an :class:`~rocpd.analysis.Analysis` into ranked, plain-language
statements with their evidence and a suggestion.

Each rule is a function ``rule(analysis) -> list[Finding]`` in a module of ``rocpd.analysis.rules``
(listed in that module's ``RULES``); a rule fires only on numbers that show its pattern
(thresholds named at the top of its module, so that tests and users can read them).
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
