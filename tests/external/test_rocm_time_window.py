"""Time windows in percent of the run: the run spans what ROCm's get_min_max_time spans (regions,
samples, kernels, copies, allocations), so `--start 25% --end 75%` keeps the records ROCm's
apply_time_window keeps."""

from __future__ import annotations

import rocpd
from rocpd.io import time_window
from rocpd.testing import DatabaseBuilder

_WINDOW = """
import sys
import rocm_rocpd
from rocm_rocpd.time_window import apply_time_window, get_min_max_time
data = rocm_rocpd.connect([sys.argv[1]])
bounds = list(get_min_max_time(data))
apply_time_window(data, start="25%", end="75%", inclusive=True)
result = {"bounds": bounds, "regions": data.execute("SELECT count(*) FROM regions").fetchone()[0],
          "samples": data.execute("SELECT count(*) FROM samples").fetchone()[0]}
"""


def _sampled_run(path) -> str:
    """Ranges in the middle of the run, call-stack samples before and after them."""
    with DatabaseBuilder(path, pid=5100) as b:
        t = 1_000_000
        for i in range(16):
            b.marker(f"r{i}", t + 400_000 + i * 50_000, t + 420_000 + i * 50_000)
        for i in range(12):
            b.sample(None, t + i * 120_000, call_stack=["main", "work"])
    return str(path)


def test_percent_window_spans_samples_as_rocm(rocm, tmp_path):
    db = _sampled_run(tmp_path / "s.db")
    theirs = rocm.python(_WINDOW, db)
    with rocpd.connect(db) as ours:
        assert list(time_window.run_bounds(ours)) == theirs["bounds"]
        time_window.apply_time_window(ours, start="25%", end="75%")
        got = {"regions": ours.execute("SELECT count(*) FROM regions").fetchone()[0],
               "samples": ours.execute("SELECT count(*) FROM samples").fetchone()[0]}
    assert got == {k: theirs[k] for k in got} and got["regions"] > 0, (got, theirs)
