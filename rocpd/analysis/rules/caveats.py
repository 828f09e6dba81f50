"""What to read the findings with: records dropped, samples missed, no GPU work, GPU idle time the
trace cannot explain (no API calls), no steps found. Caveats rank before every other finding."""

from __future__ import annotations

from ...textfmt import SAMPLES_MISSED_ADVICE, records_were, samples_missed
from .. import scope
from ..findings import Finding, _pct

UNKNOWN_MIN = 0.20  # GPU idle for reasons the trace cannot tell: this share of the time


def caveats(a) -> list[Finding]:
    out = []
    lost = a.dropped - a.samples_missed
    if lost > 0:
        out.append(Finding("dropped-records", f"{records_were(lost)} dropped while profiling: "
                           "the numbers below undercount",
                           "profile a shorter window (--selected-regions) or trace less", 1.0,
                           level="caveat"))
    if a.samples_missed:
        # A few missed ticks change no share; from 1 % of the samples they are a caveat.
        title, share = samples_missed(a.samples_missed, a.samples_taken)
        out.append(Finding("missed-samples", title, SAMPLES_MISSED_ADVICE,
                           1.0 if share >= 0.01 else 0.0,
                           level="caveat" if share >= 0.01 else "info"))
    if not any(p.gpu_ops for p in a.processes):
        cpu = any(len(p.ranges) for p in a.processes) or \
            any(p.samples is not None and len(p.samples) for p in a.processes)
        out.append(Finding("no-gpu-work", "no GPU work was recorded: " + (
            "the findings below come from the ROCTx ranges and call-stack samples" if cpu else
            "nothing to break down"), "run on a GPU host with kernel tracing (rocprof run "
            "--kernel-trace or --sys-trace) for the GPU's side", 1.0, level="caveat"))
        return out
    tot, unit = scope.windows(a)
    if tot is not None and tot["IdleNs"] and tot["UnknownNs"] >= UNKNOWN_MIN * tot["SpanNs"]:
        out.append(Finding("no-api-calls", f"{_pct(tot['UnknownNs'] / tot['SpanNs'])} of the GPU's "
                           "time is idle for reasons the trace cannot tell: no API calls recorded",
                           "trace the runtime API too (rocprof run --sys-trace or --runtime-trace)",
                           0.5, level="caveat"))
    if a.step_source == "none" and any(p.gpu_ops for p in a.processes):
        out.append(Finding("no-steps", "no step range found: the whole run is analysed as one",
                           "wrap each iteration in roctx.range(\"step\") (or name one with --step)",
                           0.0, level="info"))
    return out


RULES = (caveats,)
