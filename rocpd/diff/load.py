"""One side of a diff from its databases: analysed once, split into runs (rocpd.diff.runs), each
process cut into steps (rocpd.diff.side for GPU work, rocpd.diff.cpu without), the steps of the
runs numbered one after the other."""

from __future__ import annotations

from ..analysis import analyze, bounded
from ..analysis.steps import steps_of
from ..analysis.streamed import STREAM_ABOVE
from . import cpu, every_step, runs, streamed
from .side import Side, proc


def load(db, label: str, step: str | None, skip_steps: int, stream_above: int | None = STREAM_ABOVE,
         **filters) -> Side:
    """``db``: an open Connection. ``step``: as rocpd.analysis.analyze takes it. A side whose
    processes did no GPU work is read as a CPU run (``Side.gpu`` False). A process of more
    kernels than ``stream_above`` is swept (rocpd.diff.streamed), not held."""
    a = analyze(db, step=step, stream_above=stream_above, **filters)
    side = Side(label, list(db.paths), a.step_name, a.step_source, dropped=a.dropped,
                meters=a.meters, memory=a.memory)
    side.gpu = any(p.gpu_ops for p in a.processes)
    side.swept = any(p.stream is not None for p in a.processes)
    for f in bounded.facts(db):  # rocprof run --max-size: most steps are summaries only
        side.notes.append(f"{label}: a bounded run: {f.get('steps', 0)} steps, "
                          f"{f.get('steps_with_detail', 0)} kept whole; the tables compare "
                          "those, the 'every step' note all of them")
    side.every_step_ns = every_step.step_times(db, skip_steps)
    hz = _rates(db)
    offset = 0
    for idx in runs.split(a.processes):
        procs = []
        for i in idx:
            p = a.processes[i]
            if side.gpu and not p.gpu_ops:
                continue  # a launcher or a data-loader process: no GPU work to compare
            if not side.gpu and not cpu.has_work(p):
                continue
            # its own steps: two runs' processes may share a pid and a label
            st = steps_of(p, a.step_name) if a.step_name else None
            if st is not None and st.empty:
                # Its whole run as one step would be averaged with the others' first step.
                what = "GPU work" if side.gpu else "ROCTx ranges or samples"
                side.notes.append(f"{label}: {p.label} has {what} but no '{a.step_name}' step:"
                                  " left out")
                continue
            if side.gpu:
                how = proc if p.stream is None else streamed.proc
                procs.append(how(p, st, a.gaps[i], a.blocking[i], a.step_name, skip_steps))
            else:
                procs.append(cpu.proc(p, st, a.step_name, skip_steps, hz.get(p.guid)))
        if not procs:
            continue
        for ps in procs:
            ps.run = side.runs
            ps.shift(offset)
        offset += max(len(ps.steps) for ps in procs)
        side.runs += 1
        side.procs += procs
    return side


def _rates(db) -> dict:
    """The sampling rate (Hz) of each part that stored one."""
    out = {}
    for guid, tag, value in db.metadata():
        if tag == "rocprof.sampling.hz":
            try:
                out[guid] = float(value)
            except ValueError:
                continue
    return out
