"""The gap rows of a process swept in chunks (rocpd.analysis.sweep): written to a temporary
directory a piece at a time and read back a piece at a time by what reads gaps (the waits table,
the findings' scope and host work), so that no reader holds one row per gap of a long run."""

from __future__ import annotations

import os
import pickle
import tempfile


class SpilledGaps:
    """A process's gap frames, per GPU in GPU order and in time order within one GPU (the order
    of the in-memory frame's rows)."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="rocpd-gaps-")  # removed with the object
        self._files: dict = {}
        self.rows = 0

    def sink(self, key):
        """A function that spills one frame of GPU ``key``'s gaps."""
        def write(frame):
            path = os.path.join(self._dir.name, f"{len(self._files.get(key, []))}-{key}.pkl")
            with open(path, "wb") as f:
                pickle.dump(frame, f, protocol=pickle.HIGHEST_PROTOCOL)
            self._files.setdefault(key, []).append(path)
            self.rows += len(frame)
        return write

    def pieces(self):
        for key in sorted(self._files):
            for path in self._files[key]:
                with open(path, "rb") as f:
                    yield pickle.load(f)

    def __len__(self) -> int:
        return self.rows

    @property
    def empty(self) -> bool:
        return self.rows == 0


def pieces_of(gaps):
    """The frames of a process's gaps: the frame itself, or a spilled one's pieces."""
    return gaps.pieces() if isinstance(gaps, SpilledGaps) else [gaps]
