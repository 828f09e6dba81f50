"""The Perfetto trace's tracks: each a small sequential uuid, unique in the file, with the
descriptor that names it (a process, a thread, a counter or a named track under a parent)."""

from __future__ import annotations


class Tracks:
    """Track uuids and descriptors; uuids are small sequential integers, unique in the file."""

    def __init__(self):
        self.uuid: dict[tuple, int] = {}
        self.descriptors: list[tuple] = []  # (uuid, parent, kind, fields)

    def get(self, key, parent=None, kind="named", **fields) -> int:
        if key not in self.uuid:
            self.uuid[key] = len(self.uuid) + 1
            self.descriptors.append((self.uuid[key], parent, kind, fields))
        return self.uuid[key]


def write_descriptors(b, pb, tracks: Tracks, seq: int) -> None:
    """Every track's descriptor packet, in the order the tracks were made, on sequence ``seq``
    (the first one clears its incremental state)."""
    first = True
    for uuid, parent, kind, fields in tracks.descriptors:
        p = b.create_packet()
        p.trusted_packet_sequence_id = seq
        if first:
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first = False
        d = p.track_descriptor
        d.uuid = uuid
        if parent is not None:
            d.parent_uuid = parent
        if kind == "process":
            d.process.pid = fields["pid"]
            d.process.process_name = fields["name"]
        elif kind == "thread":
            d.thread.pid = fields["pid"]
            d.thread.tid = fields["tid"]
            d.thread.thread_name = fields["name"]
        elif kind == "counter":
            d.name = fields["name"]
            d.counter.unit_name = fields["units"]
        else:
            d.name = fields["name"]
        b.write_packet(p)
