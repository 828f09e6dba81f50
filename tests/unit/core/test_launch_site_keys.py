"""A forward op's key and its site come from two walks of the same frames: the torch observer
keys the op by the frames alone (code object and instruction, no code object read), and the
first op of a key resolves its site from the full walk (which leaves out frames that have not
started: CPython hides them too). The walks share their step, so they stop at the same frame
of a deep chain: two chains that differ past that frame share a key and a site that fits both.

Where the two can see different frames: on CPython 3.11 a collection runs inside a frame's
prologue (a generator's object or a closure's cells are allocated before its first
instruction), and its callbacks and finalisers run Python code, torch ops included, over that
not-started frame. The observer's capture_forward is called through a test hook (no torch
needed)."""

import gc
import json
import sys

import pytest
from rocprof import _core

pytestmark = pytest.mark.skipif(not hasattr(_core, "_launch_site_here"),
                                reason="built without the CUPTI backend (launch sites are its)")


def _functions(text):
    return [frame["function"] for frame in json.loads(text)]


def _frames_a_walk_copies():
    def down(k):
        return _core._launch_site_here() if k == 0 else down(k - 1)

    return len(_functions(down(200)[2]))


class _Tracked:
    pass


def _generator():
    yield


@pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                    reason="only CPython 3.11 runs Python code over a frame that has not started "
                    "(3.12+ collect at the eval loop's safe points, 3.10 has no such frames)")
def test_a_forward_op_over_a_frame_not_started_names_its_own_chain(launch_sites_started):
    depth = _frames_a_walk_copies()
    seen = {}  # outer function -> (key, the chain Python shows, innermost first)
    armed = []

    def on_collect(phase, info):
        if armed and phase == "start" and armed[0] not in seen:
            chain, f = [], sys._getframe()
            while f is not None:
                chain.append(f.f_code.co_qualname)
                f = f.f_back
            seen[armed[0]] = (_core._launch_site_forward("aten::probe"), chain)

    def collect_in_a_prologue(outer):
        for _ in range(50):  # until the generator's allocation ran a collection
            tracked = (_Tracked(), _Tracked())  # two new tracked objects: the next one collects
            threshold = gc.get_threshold()
            gc.set_threshold(1)
            armed.append(outer)
            try:
                _generator()
            finally:
                armed.clear()
                gc.set_threshold(*threshold)
            del tracked
            if outer in seen:
                return

    def down(k, outer):
        return collect_in_a_prologue(outer) if k == 0 else down(k - 1, outer)

    # Python's chain at the op: on_collect, collect_in_a_prologue, down x (depth - 3), outer: the
    # outer function is the last frame a full walk could copy, and the not-started generator
    # between on_collect and collect_in_a_prologue takes a place in the walk.
    def outer_a():
        down(depth - 4, "a")

    def outer_b():
        down(depth - 4, "b")

    gc.callbacks.append(on_collect)
    try:
        outer_a()
        outer_b()
    finally:
        gc.callbacks.remove(on_collect)
    assert set(seen) == {"a", "b"}, "no collection ran inside the generator's prologue"
    for outer, (key, chain) in seen.items():
        assert chain[depth - 1].endswith(f"outer_{outer}"), chain
        site = _functions(_core._launch_site_json(key))
        assert site == chain[:len(site)], (outer, site[len(site) - 3:])
