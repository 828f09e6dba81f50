"""ROCm's Perfetto buffer settings for a trace written from a database.

ROCm's ``rocpd convert`` records through Perfetto's tracing SDK into one buffer of
``--perfetto-buffer-size`` KB (default 1 GB) that, when full, drops new events
(``--perfetto-buffer-fill-policy discard``) or overwrites the oldest (``ring_buffer``). Our writer
streams packets straight into the file, so it has no buffer of its own and loses nothing unless
asked: with a size given, :class:`Budget` keeps the trace within it the way the policy says,
track descriptors always kept (events without their track would not show), and counts what it
left out. ``--perfetto-backend`` and ``--perfetto-shmem-size-hint`` configure the SDK's
producer/consumer transport, which a file written from a database does not have: they are
recorded in the trace's TraceConfig packet (:func:`config_packet`) and change nothing else.
"""

from __future__ import annotations

import collections
import sys

BACKENDS = ("inprocess", "system")
FILL_POLICIES = ("discard", "ring_buffer")


class Budget:
    """A binary file wrapper that the trace builder writes one packet per ``write`` into. Before
    :meth:`events` every packet is kept (descriptors); after it, packets are kept within
    ``size_kb`` (None: all) by ``policy``."""

    def __init__(self, fh, size_kb: int | None = None, policy: str = "discard"):
        if policy not in FILL_POLICIES:
            raise ValueError(f"perfetto buffer fill policy must be one of {', '.join(FILL_POLICIES)},"
                             f" not {policy!r}")
        if size_kb is not None and size_kb <= 0:
            raise ValueError(f"perfetto buffer size must be a positive number of KB, not {size_kb}")
        self.fh, self.policy = fh, policy
        self.limit = None if size_kb is None else size_kb * 1024
        self.used = 0
        self.kept = self.dropped = 0
        self._counting = False
        self._ring: collections.deque = collections.deque()

    def events(self) -> None:
        """From here on, packets are events and count against the budget."""
        self._counting = True

    def write(self, data: bytes) -> None:
        n = len(data)
        if not self._counting or self.limit is None:
            self.used += n
            self.kept += self._counting
            self.fh.write(data)
        elif self.policy == "discard":
            if self.used + n > self.limit:
                self.dropped += 1
                return
            self.used += n
            self.kept += 1
            self.fh.write(data)
        else:  # ring_buffer: the newest events that fit; written when the trace is complete
            self._ring.append(data)
            self.used += n
            while self.used > self.limit and self._ring:
                self.used -= len(self._ring.popleft())
                self.dropped += 1

    def write_many(self, data: bytes, lengths) -> None:
        """Packets one after the other in ``data``, of ``lengths`` bytes each: one write where
        nothing is counted against a size, else each as :meth:`write`."""
        if not self._counting or self.limit is None:
            self.used += len(data)
            self.kept += len(lengths) if self._counting else 0
            self.fh.write(data)
            return
        at = 0
        for n in lengths.tolist():
            self.write(data[at:at + n])
            at += n

    def finish(self, path: str) -> None:
        """Write what the ring kept; say what the budget cost (nothing is lost unsaid)."""
        self.kept += len(self._ring)
        while self._ring:
            self.fh.write(self._ring.popleft())
        if self.dropped:
            kb = self.limit // 1024
            which = "newest" if self.policy == "discard" else "oldest"
            print(f"rocpd: warning: {path}: {self.dropped} of {self.dropped + self.kept} trace events"
                  f" left out, the {which}: the trace is limited to --perfetto-buffer-size {kb} KB"
                  f" (--perfetto-buffer-fill-policy {self.policy}); give a larger size, or none,"
                  " to keep them all", file=sys.stderr)


def config_packet(packet, size_kb: int | None, policy: str, backend: str | None,
                  shmem_size_hint_kb: int | None) -> None:
    """Fill ``packet`` (a TracePacket) with a TraceConfig naming the settings asked for: the
    buffer (as the budget applied) and, in the track_event data source's config, the SDK settings
    that have no effect on a file (Perfetto keeps a trace's config; trace_processor shows it in
    its metadata table as trace_config_pbtxt)."""
    cfg = packet.trace_config
    buf = cfg.buffers.add()
    if size_kb is not None:
        buf.size_kb = size_kb
    buf.fill_policy = buf.RING_BUFFER if policy == "ring_buffer" else buf.DISCARD
    ds = cfg.data_sources.add().config
    ds.name = "track_event"
    notes = []
    if backend is not None:
        notes.append(f"perfetto_backend={backend}")
    if shmem_size_hint_kb is not None:
        notes.append(f"perfetto_shmem_size_hint_kb={shmem_size_hint_kb}")
    if notes:
        ds.legacy_config = ("rocpd convert: " + " ".join(notes) + " (settings of Perfetto's"
                            " tracing SDK; not applicable to a trace written from a database)")
