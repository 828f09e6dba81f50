"""Call-stack samples in a Perfetto trace as Perfetto's own CPU-profile data: one ``PerfSample``
packet per sample (pid, tid, time) naming an interned callstack, whose frames carry the function,
its source file and line, so the UI draws each thread's callstack-sampling track and a flame
graph of any selection (the trace processor's ``perf_sample`` and ``stack_profile_*`` tables).

Interned data (function names, source paths, mappings, frames, callstacks) is sent once, in the
packet of the first sample that needs it, on the trace's one packet sequence (whose first packet
cleared the incremental state). Frames of one kind (python, native) share one mapping named after
the kind: a Python frame has no binary to point at.
"""

from __future__ import annotations

from array import array

import numpy as np


class Profile:
    """The samples of a trace, gathered while reading, written after the other events: 16
    bytes a sample (time, the thread's number, the stack's number), each distinct thread and
    stack held once."""

    def __init__(self):
        self.ts, self.thread, self.stack = array("q"), array("i"), array("i")
        self.chains: dict[tuple, int] = {}  # frames outermost first -> number
        self.threads: dict[tuple, int] = {}  # (pid, tid) -> number

    def __len__(self) -> int:
        return len(self.ts)

    def add(self, ts: int, pid: int, tid: int, frames) -> None:
        chain = tuple(frames)
        n = self.chains.setdefault(chain, len(self.chains))
        self.ts.append(ts)
        self.thread.append(self.threads.setdefault((pid, tid), len(self.threads)))
        self.stack.append(n)

    def write(self, b, pb, seq: int) -> None:
        strings: dict[tuple, int] = {}  # (table, text) -> iid
        frames: dict[object, int] = {}
        stacks: dict[tuple, int] = {}

        def string(table, text, interned):
            key = (table, text)
            if key not in strings:
                strings[key] = iid = len(strings) + 1
                getattr(interned, table).add(iid=iid, str=text.encode())
            return strings[key]

        def mapping(kind, interned):
            key = ("mapping", kind)
            if key not in strings:
                path = string("mapping_paths", kind, interned)
                strings[key] = iid = len(strings) + 1
                interned.mappings.add(iid=iid, path_string_ids=[path])
            return strings[key]

        chains, threads = list(self.chains), list(self.threads)
        order = np.argsort(np.frombuffer(self.ts, dtype=np.int64), kind="stable")
        # In time order, samples of one time in the order read; a slice at a time (a list of
        # every sample's number took 36 bytes a sample).
        for i in (i for a in range(0, len(order), 1 << 16) for i in order[a:a + (1 << 16)].tolist()):
            ts, chain = self.ts[i], chains[self.stack[i]]
            pid, tid = threads[self.thread[i]]
            p = b.create_packet()
            p.trusted_packet_sequence_id = seq
            p.sequence_flags = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            p.timestamp = ts
            interned = p.interned_data
            if chain not in stacks:
                ids = []
                for f in chain:
                    if f not in frames:
                        frames[f] = iid = len(frames) + 1
                        interned.frames.add(
                            iid=iid, function_name_id=string("function_names", f.function, interned),
                            mapping_id=mapping(f.kind, interned),
                            source_path_iid=string("source_paths", f.file, interned),
                            line_number=f.line)
                    ids.append(frames[f])
                stacks[chain] = iid = len(stacks) + 1
                interned.callstacks.add(iid=iid, frame_ids=ids)  # outermost (bottom) first
            else:
                p.ClearField("interned_data")
            s = p.perf_sample
            s.pid, s.tid, s.callstack_iid = pid, tid, stacks[chain]
            b.write_packet(p)
