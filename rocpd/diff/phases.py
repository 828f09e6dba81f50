"""The phase of a step each piece of GPU work belongs to: data, forward, backward, optimizer,
communication, or other; GPU idle time inside a step is the phase *idle*.

In order (the first that applies):
1. collective kernels (NCCL/RCCL, the analysis' *communication* kind) are communication;
2. the innermost ROCTx range open at the launch whose name says a phase (``forward``, ``bwd``,
   ``optimizer``, ``data_loading`` ...: ``RANGE_PHASES``), on the launching thread, else on any
   thread of the process (PyTorch launches the backward kernels from its own threads while the
   user's thread waits inside ``backward()`` in its "backward" range); the step range itself
   names no phase;
3. the kernel's name (``*_backward_*``, ``dgrad``, ``adam``, ``multi_tensor_apply`` ...);
4. copies from the host to a GPU are data;
5. anything else is *other*.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..analysis.steps import key_of

PHASES = ("data", "forward", "backward", "optimizer", "communication", "other", "idle")
RANGE_PHASES = (
    ("backward", re.compile(r"(?i)backward|(?<![a-z])bwd|_bwd|grad")),
    ("forward", re.compile(r"(?i)forward|(?<![a-z])fwd|_fwd")),
    ("optimizer", re.compile(r"(?i)optim|adam|sgd|zero_grad|(?<![a-z])update")),
    ("data", re.compile(r"(?i)data|load|fetch|input|prefetch|to_device|h2d")),
    ("communication", re.compile(r"(?i)all_?reduce|all_?gather|reduce_?scatter|broadcast|"
                                 r"(?<![a-z])comm|nccl|rccl")),
)
KERNEL_PHASES = (
    ("optimizer", re.compile(r"(?i)adam|sgd|lamb|adagrad|rmsprop|optimizer|multi_tensor_apply")),
    ("backward", re.compile(r"(?i)backward|_bwd|bwd_|dgrad|wgrad|grad_input|grad_weight")),
)


def range_phase(name: str) -> str | None:
    for phase, pat in RANGE_PHASES:
        if pat.search(name):
            return phase
    return None


def kernel_phase(name: str) -> str | None:
    for phase, pat in KERNEL_PHASES:
        if pat.search(name):
            return phase
    return None


def _fill(out, times, ranges, phases, tids=None):
    """Set ``out[i]`` (where still None) to the phase of the innermost range of ``ranges``
    holding ``times[i]``; with ``tids``, only ranges of the same thread."""
    todo = np.array([v is None for v in out], dtype=bool)
    if not todo.any() or ranges.empty:
        return
    keys = ["tid", "depth"] if tids is not None else ["depth"]
    # Deeper ranges last, so that the innermost one holding a launch is the one kept.
    for key, g in sorted(ranges.groupby(keys, sort=False), key=lambda kv: kv[0][-1]):
        m = todo.copy()
        if tids is not None:
            m &= tids == key[0]
        if not m.any():
            continue
        g = g.sort_values("start", kind="stable")
        s, e = g["start"].to_numpy(), g["end"].to_numpy()
        ph = phases[g.index.to_numpy()]
        idx = np.flatnonzero(m)
        i = np.searchsorted(s, times[idx], side="right") - 1
        ok = i >= 0
        ok[ok] = times[idx[ok]] < e[i[ok]]
        out[idx[ok]] = ph[i[ok]]


def of_ops(p, ops, times, step_key: str | None):
    """Phase of each GPU op of process ``p`` (rows of ``ops``, launched at ``times``) as an
    object array (see the module's text)."""
    n = len(ops)
    out = np.full(n, None, dtype=object)
    if n == 0:
        return out
    kind = ops["kind"].to_numpy()
    out[kind == "comm"] = "communication"
    r = p.ranges
    if len(r):
        names = r["name"].astype(str)
        phases = np.array([range_phase(x) for x in names], dtype=object)
        if step_key:
            phases[names.map(key_of).to_numpy() == step_key] = None
        keep = np.array([x is not None for x in phases], dtype=bool)
        ranked = r[keep]
        ph = np.full(len(r), None, dtype=object)
        ph[keep] = phases[keep]
        tids = ops["launch_tid"].to_numpy()
        _fill(out, times, ranked, ph, tids)
        _fill(out, times, ranked, ph)
    # Once per distinct name, each row pointing at its result (a Python call per row cost
    # ~1.5 µs of an op's diff).
    codes, uniq = pd.factorize(ops["name"].astype(str).to_numpy(dtype=object))
    by_name = np.array([kernel_phase(n_) for n_ in uniq] + [None], dtype=object)[codes]
    todo = np.array([v is None for v in out], dtype=bool)
    out[todo] = by_name[todo]
    todo = np.array([v is None for v in out], dtype=bool)
    h2d = (kind == "memory") & (ops["direction"].to_numpy() == "H2D")
    out[todo & h2d] = "data"
    out[np.array([v is None for v in out], dtype=bool)] = "other"
    return out
