"""The events of a Perfetto trace whose kernels are streamed (rocpd.export._perfetto_gpu), merged
with the held ones (API calls, ranges, copies' tracks, instants, counter values) in the order
the held writer sorts every event in: by time, ties by the place of the track among those with
slices, then by the event's place on its track (a lane's order); instants and counter values
after every slice, in the order read. Each window of kernels' events is final up to its limit,
and so are the held events before it."""

from __future__ import annotations

import numpy as np

from ..progress import Bar

ENCODE = 1 << 13  # events packed at a time (~500 bytes of arrays each while packed)


def merged_events(fh, enc, gs, ts, track, code, rank, order, part: int) -> None:
    """Write every event through ``fh`` (a _perfetto_buffer.Budget): the held ones (``ts``,
    ``track``, ``code``, ``rank`` as rocpd.export.perfetto._events gives them, sorted by
    ``order``) and the kernels' of ``gs``."""
    held_ts = ts[order]
    bar = Bar(len(ts) + 2 * gs.count, "writing")
    k = done = 0
    for ev, limit in gs.windows(part):
        j = len(order) if limit is None else int(np.searchsorted(held_ts, limit, "left"))
        done += _write(fh, enc, ev, ts, track, code, rank, order[k:j])
        k = j
        bar.tick(done)
    if k < len(order):  # no kernel at all
        _write(fh, enc, None, ts, track, code, rank, order[k:])
    bar.tick(len(ts) + 2 * gs.count)


def _write(fh, enc, ev, ts, track, code, rank, o) -> int:
    held = enc.fields(ts[o], track[o], code[o])
    held["rank"], held["pos"] = rank[o], o
    if ev is None:
        both = held
    else:
        both = {key: np.concatenate([held[key], ev[key]]) for key in ev}
    n = len(both["ts"])
    srt = np.lexsort((both["pos"], both["rank"], both["ts"]))
    for a in range(0, n, ENCODE):
        s = srt[a:a + ENCODE]
        fh.write_many(*enc.pack({key: v[s] for key, v in both.items()}))
    return n
