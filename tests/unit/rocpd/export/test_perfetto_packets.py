"""The Perfetto writer's event encoder (rocpd.export._perfetto_packets) against the perfetto
package's own TracePacket serialization, filled as the writer filled it before the encoder: slice
begins with and without a category, a corr_id or a flow (out and in), ends, instants, counter
values, empty and non-ASCII names, varints of every width, a flow seen twice; byte for byte, and
in chunks of one event (the flow numbering runs across chunks)."""

from __future__ import annotations

import io

import numpy as np
import pytest

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                         reason="the 'perfetto' package is not installed")
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder  # noqa: E402

from rocpd.export._perfetto_packets import Encoder  # noqa: E402
from rocpd.export.perfetto import _IN, _OUT, _Records  # noqa: E402


def _reference(rec, flow, values, ts, track, code) -> bytes:
    """The writer's loop over its events with the builder, as it was."""
    out = io.BytesIO()
    b = StreamingTraceProtoBuilder(out)
    ids: dict = {}
    for t, u, c in zip(ts.tolist(), track.tolist(), code.tolist(), strict=True):
        p = b.create_packet()
        p.trusted_packet_sequence_id = 1
        p.timestamp = t
        e = p.track_event
        e.track_uuid = u
        if c < 0 and c & 1:
            e.type = pb.TrackEvent.TYPE_COUNTER
            e.double_counter_value = values[(-1 - c) >> 1]
        elif c < 0:
            i = (-2 - c) >> 1
            e.type = pb.TrackEvent.TYPE_INSTANT
            e.name = rec.text[rec.name[i]]
            if rec.cat[i]:
                e.categories.append(rec.text[rec.cat[i]])
        elif c & 1:
            i = c >> 1
            e.type = pb.TrackEvent.TYPE_SLICE_BEGIN
            e.name = rec.text[rec.name[i]]
            if rec.cat[i]:
                e.categories.append(rec.text[rec.cat[i]])
            if rec.stack[i]:
                a = e.debug_annotations.add()
                a.name = "corr_id"
                a.int_value = rec.stack[i]
            if flow[i] == _OUT:
                e.flow_ids.append(ids.setdefault((rec.part[i], rec.stack[i]), len(ids) + 1))
            elif flow[i] == _IN:
                e.terminating_flow_ids.append(ids.setdefault((rec.part[i], rec.stack[i]),
                                                             len(ids) + 1))
        else:
            e.type = pb.TrackEvent.TYPE_SLICE_END
        b.write_packet(p)
    return out.getvalue()


def _events():
    rec = _Records()
    rows = [(10, 20, "hipLaunchKernel", "HIP_RUNTIME_API", 7, "g0", _OUT),
            (15, 90, "gemm", "KERNEL_DISPATCH", 7, "g0", _IN),
            (16, 16, "", "", 0, "g0", 0),  # an empty name: the field is still written
            (1 << 40, (1 << 40) + 5, "héllo 🚀", "MARKER", 0, "g1", 0),
            (2**62, 2**62 + 1, "x" * 300, "c" * 130, 2**35, "g1", _OUT),  # long varints
            (3, 4, "copy", "MEMORY_COPY", 2**35, "g1", _IN)]
    for s, e, name, cat, stack, guid, fl in rows:
        rec.add(s, e, name, cat, stack, guid, fl)
    flow = rec.linked()
    values = np.array([1.5, -0.0, 1e300, 42.0])
    ts, track, code = [], [], []
    for i, (s, e, *_rest) in enumerate(rows):
        ts += [s, e]
        track += [1 + i, 1 + i if i % 2 else 200_000 + i]
        code += [2 * i + 1, 2 * i]
    ts += [5, 6, 7, 8, 9]
    track += [3, 3, 3, 4, 2**20]
    code += [-1, -3, -5, -7, -2 - 2 * 3]  # four counter values, an instant of record 3
    return rec, flow, values, np.array(ts), np.array(track), np.array(code)


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_encoder_writes_what_the_builder_writes(chunk):
    rec, flow, values, ts, track, code = _events()
    want = _reference(rec, flow, values, ts, track, code)
    enc = Encoder(rec.text, rec.name, rec.cat, rec.stack, rec.part, flow.tobytes(),
                  values.tobytes())
    got, total = b"", 0
    for k in range(0, len(ts), chunk):
        data, lengths = enc.encode(ts[k:k + chunk], track[k:k + chunk], code[k:k + chunk])
        assert int(lengths.sum()) == len(data)
        got += data
        total += len(lengths)
    assert total == len(ts)
    assert got == want
    trace = pb.Trace()
    trace.ParseFromString(got)
    assert len(trace.packet) == len(ts)
