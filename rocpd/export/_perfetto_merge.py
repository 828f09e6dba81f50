"""The events of a Perfetto trace whose kernels are streamed (rocpd.export._perfetto_gpu), merged
(one file's or several files') with the held ones (API calls, ranges, instants, counter values) in the order
the held writer sorts every event in: by time, ties by the place of the track among those with
slices, then by the event's place on its track (a lane's order); instants and counter values
after every slice, in the order read. Each window of kernels' events is final up to its limit,
and so are the held events before it."""

from __future__ import annotations

import numpy as np

from ..progress import Bar

ENCODE = 1 << 13  # events packed at a time (~500 bytes of arrays each while packed), at most:
# a trace of fewer than ENCODE * 1000 events packs fewer (down to 1,024) to keep its peak small


_END = np.iinfo(np.int64).max  # after every event


def merged_events(fh, enc, streams, ts, track, code, rank, order) -> None:
    """Write every event through ``fh`` (a _perfetto_buffer.Budget): the held ones (``ts``,
    ``track``, ``code``, ``rank`` as rocpd.export.perfetto._events gives them, sorted by
    ``order``) and the streamed ones of each file's kernels (``streams``: _perfetto_gpu's
    GpuStream, one a file). The file whose windows reach least far is read next; events
    before the least of the files' limits are final and written."""
    held_ts = ts[order]
    total = len(ts) + 2 * sum(gs.count for gs in streams)
    bar = Bar(total, "writing")
    batch = max(min(ENCODE, 1 << 10), min(ENCODE, total // 1000))
    gens = [gs.windows(gs.part) for gs in streams]
    limits = [-_END] * len(gens)
    wait = None
    k = done = 0
    while True:
        final = min(limits)
        if wait is not None:
            now = wait["ts"] < final
            ev, wait = {c: v[now] for c, v in wait.items()}, {c: v[~now] for c, v in wait.items()}
        else:
            ev = None
        j = int(np.searchsorted(held_ts, final, "left"))
        if j > k or (ev is not None and len(ev["ts"])):
            done += _write(fh, enc, ev, ts, track, code, rank, order[k:j], batch)
            k = j
            bar.tick(min(done, total - 1))
        if final == _END:
            break
        i = limits.index(final)
        got, limit = next(gens[i])
        limits[i] = _END if limit is None else limit
        wait = got if wait is None else {c: np.concatenate([wait[c], v]) for c, v in got.items()}
    bar.tick(total)


def _write(fh, enc, ev, ts, track, code, rank, o, batch: int) -> int:
    held = enc.fields(ts[o], track[o], code[o])
    held["rank"], held["pos"] = rank[o], o
    if ev is None or not len(ev["ts"]):
        both = held
    else:
        both = {key: np.concatenate([held[key], ev[key]]) for key in ev}
    n = len(both["ts"])
    srt = np.lexsort((both["pos"], both["rank"], both["ts"]))
    for a in range(0, n, batch):
        s = srt[a:a + batch]
        fh.write_many(*enc.pack({key: v[s] for key, v in both.items()}))
    return n


def flow_uses(rec_stack, rec_part, linked_flow, streams) -> dict:
    """part -> (sorted stack ids, how many begins carry each one's flow): the held records'
    (``linked_flow`` != 0) and the streamed ones' (a kernel's found in its first pass; an API
    call's where its stack id is in the stream's ``both``), for the encoder to forget a flow
    once written whole."""
    pieces: dict = {}
    flow = np.frombuffer(linked_flow, dtype=np.int8) != 0
    stack = np.frombuffer(rec_stack, dtype=np.int64)[flow]
    part = np.frombuffer(rec_part, dtype=np.int32)[flow]
    for p in np.unique(part).tolist():
        u, c = np.unique(stack[part == p], return_counts=True)
        pieces.setdefault(p, []).append((u, c))
    for s in streams:
        u, c = s.linked, s.uses
        both = getattr(s, "both", None)
        if both is not None:
            keep = np.isin(u, both)
            u, c = u[keep], c[keep]
        pieces.setdefault(s.part, []).append((u, c))
    out = {}
    for p, got in pieces.items():
        u, inv = np.unique(np.concatenate([g[0] for g in got]), return_inverse=True)
        out[p] = (u, np.bincount(inv.reshape(-1), weights=np.concatenate([g[1] for g in got]),
                                 minlength=len(u)).astype(np.int64))
    return out
