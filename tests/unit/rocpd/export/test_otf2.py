"""OTF2 export read back with the otf2 package's reader and checked against the database's rows."""

import os
import subprocess
import sys
from collections import Counter

import pytest
from support import ROOT

import rocpd

otf2 = pytest.importorskip("otf2", reason="the 'otf2' package is not installed")


def _read(anchor):
    slices, locs = [], {}
    stacks = {}
    with otf2.reader.open(anchor) as tr:
        assert tr.definitions.clock_properties.timer_resolution == 1_000_000_000
        for loc in tr.definitions.locations:
            locs[loc.name] = (loc.type, loc.group.name, loc.group.location_group_type,
                              loc.group.system_tree_parent.name)
        for loc, ev in tr.events:
            st = stacks.setdefault(loc.name, [])
            if isinstance(ev, otf2.events.Enter):
                st.append((ev.region.name, ev.time, len(st), st[-1][0] if st else None, ev.region.region_role))
            elif not isinstance(ev, otf2.events.CallingContextSample):  # call-stack samples
                assert isinstance(ev, otf2.events.Leave) and st and st[-1][0] == ev.region.name
                name, start, depth, parent, role = st.pop()
                slices.append((loc.name, name, start, ev.time, depth, parent, role))
    assert all(not s for s in stacks.values())
    return locs, slices


def test_locations_regions_nesting(run_db, tmp_path):
    path, raw = run_db
    from rocpd.export import otf2 as exporter

    with rocpd.connect(path) as db:
        anchor = exporter.write(db, str(tmp_path / "arch"))
    assert anchor.endswith("traces.otf2") and os.path.exists(anchor)
    locs, slices = _read(anchor)
    assert locs["MainThread"][0] == otf2.LocationType.CPU_THREAD
    assert locs["MainThread"][2] == otf2.LocationGroupType.PROCESS and locs["MainThread"][3] == "host0"
    gpu = {n: v for n, v in locs.items() if v[2] == otf2.LocationGroupType.ACCELERATOR}
    assert set(gpu) == {"Default Stream", "Stream 1", "Default Stream (overlap 1)"}
    cpu = Counter((s[1], s[2], s[3]) for s in slices if s[0] == "MainThread")
    assert cpu == Counter([*raw["markers"], *raw["api"]])
    kern = Counter((s[1], s[2], s[3]) for s in slices if s[6] == otf2.RegionRole.KERNEL)
    assert kern == Counter((n, a, b) for n, a, b, _ in raw["kernels"])
    assert all(s[0] in gpu for s in slices if s[6] == otf2.RegionRole.KERNEL)
    copies = sorted((s[1], s[2], s[3]) for s in slices if s[6] == otf2.RegionRole.DATA_TRANSFER)
    assert copies == sorted(raw["copies"])
    for s in slices:
        if s[0] == "MainThread" and s[1] != "train":
            assert s[4] >= 1 and s[5] in ("train", "step")


def test_cli_and_safe_overwrite(run_db, tmp_path):
    path, raw = run_db
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "arch"
    for _ in range(2):  # the second run replaces its own archive
        r = subprocess.run([sys.executable, "-m", "rocpd", "convert", path, "-f", "otf2", "-o", str(out),
                            "--include", "relu"], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
    _, slices = _read(str(out / "traces.otf2"))
    kern = [s for s in slices if s[6] == otf2.RegionRole.KERNEL]
    assert len(kern) == sum(1 for r in raw["kernels"] if r[0] == "relu") and {s[1] for s in kern} == {"relu"}
    other = tmp_path / "home"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    r = subprocess.run([sys.executable, "-m", "rocpd", "convert", path, "-f", "otf2", "-o", str(other)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "holds other files" in r.stderr and (other / "keep.txt").exists()
    assert len(r.stderr.strip().splitlines()) == 1
