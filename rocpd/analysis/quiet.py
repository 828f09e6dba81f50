"""Why a table of the analysis has nothing to say: one line naming what was not recorded and the
flag that records it, so that `rocpd analyze` and the report print that line instead of an empty
table or a table of zeros."""

from __future__ import annotations

NO_GPU = ("no GPU work recorded (kernels, copies): `rocprof run` records them on a GPU host by "
          "default (--kernel-trace, --memory-copy-trace; --sys-trace for API calls too)")
NO_STEPS = ("no step range found: wrap each iteration in roctx.range(\"step\") (ROCTx ranges are "
            "recorded by default, --marker-trace) or name one with --step")
STEPS_OFF = "steps turned off (--no-steps): the whole run is analysed as one"
# The CPU-only tables (phases, hot lines) of a run with GPU work: the GPU tables say where its
# time goes; left out without a line.
GPU_RUN = "a run with GPU work: its GPU tables say where the time goes"


def _gpu(a) -> bool:
    return any(p.gpu_ops for p in a.processes)


def _api(a) -> bool:
    return any(len(p.api) for p in a.processes)


def omitted(a, section: str) -> str | None:
    """The line to print instead of ``section``'s table, or None when the table has something."""
    steps = NO_STEPS if a.step_source != "off" else STEPS_OFF
    if section == "findings":
        return None
    if section == "steps":
        return steps if a.steps.empty else None
    if section in ("phases", "hot-lines"):
        if _gpu(a):
            return GPU_RUN
        if section == "phases" and a.phases.empty:
            return ("no ROCTx ranges recorded: roctx.range(...) in the program (recorded by "
                    "default, --marker-trace)")
        if section == "hot-lines" and a.hot_lines.empty:
            return "no call-stack samples recorded: rocprof run --sample"
        return None
    if section == "ranges":
        if a.ranges.empty:
            return ("no ROCTx ranges recorded: roctx.range(...) in the program (recorded by "
                    "default, --marker-trace)")
        return None if _gpu(a) else NO_GPU
    if not _gpu(a):
        return NO_GPU
    if section == "per-step":
        return steps if a.per_step.empty else None
    if section in ("launch", "launch-summary"):
        if a.launch_stats.empty:
            return "no kernels recorded, only copies: --kernel-trace records kernels"
        return None
    if section == "overlap":
        ov = a.overlap
        if ov.empty or not ov["CommTotalNs"].sum():
            return ("no collective kernels (NCCL, RCCL) recorded: no communication to overlap "
                    "with compute")
        return None
    if section == "stragglers":
        if len(a.processes) < 2:
            return ("one process: a straggler is a rank slower than the others (profile every "
                    "rank: rocprof run ... torchrun ...)")
        return None
    if section == "lines":
        return ("no Python launch sites recorded (the GPU work was not launched from Python)"
                if a.lines.empty else None)
    if section == "waits":
        if not a.waits.empty:
            return None
        if not _api(a):
            return ("no API calls recorded: synchronisations and copies to the host are API "
                    "calls, recorded with --sys-trace (or --runtime-trace)")
        return "no synchronisations or copies to the host among the API calls recorded"
    table = a.table(section)
    return "(no rows)" if table is None or table.empty else None


def grouped(a, sections) -> list[str]:
    """One line per reason, naming the sections it leaves out, in order."""
    by_reason: dict[str, list[str]] = {}
    for name in sections:
        why = omitted(a, name)
        if why and why != GPU_RUN:
            by_reason.setdefault(why, []).append(name)
    return [f"not shown: {', '.join(names)}: {why}" for why, names in by_reason.items()]
