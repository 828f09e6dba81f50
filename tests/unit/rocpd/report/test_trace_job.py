"""The report's Perfetto trace written by a process of its own (a large run) against the one
written in this process (a small run): the same trace bytes, the same page once plots' random
ids and the generation time are masked, the same files returned; a trace that cannot be written
is said in the page and the notes either way; a failed report stops the trace's process and
leaves no staged file behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rocpd
import rocpd.report as report
from rocpd.report import trace_job
from rocpd.summary.fastagg import _usable_cpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from test_bounded_load import _training  # noqa: E402

_INIT = trace_job.TraceJob.__init__
pytestmark = pytest.mark.skipif(_usable_cpus() < 2,
                                reason="one core: the trace is always written in-process")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace_job")
    return [_training(d / "rank0.db", 4000, 1), _training(d / "rank1.db", 4100, 2, shuffle=True)]


def _masked(path) -> str:
    text = Path(path).read_text()
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", text)
    return re.sub(r"<th>generated</th><td>[^<]*</td>", "", text)


def _write(paths, out, above, monkeypatch, jobs=None, **kw):
    jobs = [] if jobs is None else jobs
    Path(out).parent.mkdir(exist_ok=True)
    monkeypatch.setattr(trace_job, "PARALLEL_ABOVE", above)
    started = []

    def spy(self, *a, **k):
        _INIT(self, *a, **k)
        started.append(self)

    monkeypatch.setattr(trace_job.TraceJob, "__init__", spy)
    notes: list = []
    with rocpd.connect(*paths) as db:
        try:
            files = report.write_files(db, str(out), perfetto=True, notes=notes, **kw)
        finally:
            jobs[:] = started
    return files, notes, [j.parallel for j in started]


@pytest.mark.parametrize("kw", [{}, {"pid": 4100}])
def test_trace_beside_the_analysis_is_the_one_written_first(runs, tmp_path, monkeypatch, kw):
    here, notes_here, s1 = _write(runs, tmp_path / "here" / "r.html", 10**9, monkeypatch, **kw)
    apart, notes_apart, s2 = _write(runs, tmp_path / "apart" / "r.html", 10, monkeypatch, **kw)
    assert (s1, s2) == ([False], [True])
    assert [os.path.basename(f) for f in here] == [os.path.basename(f) for f in apart] \
        == ["r.html", "r.pftrace"]
    assert notes_here == notes_apart == []
    assert Path(apart[1]).read_bytes() == Path(here[1]).read_bytes()
    assert _masked(apart[0]) == _masked(here[0])
    assert "r.pftrace" in Path(apart[0]).read_text()


def test_a_trace_that_cannot_be_written_is_said(runs, tmp_path, monkeypatch):
    out = tmp_path / "r.html"
    (tmp_path / "r.pftrace").mkdir()  # a folder where the trace should go
    files, notes, started = _write(runs, out, 10, monkeypatch)
    assert started == [True] and files == [str(out)]
    assert len(notes) == 1 and notes[0].startswith("no Perfetto trace written")
    assert notes[0].split(": ", 1)[1][:20] in Path(out).read_text()


def test_a_failed_report_stops_its_trace(runs, tmp_path, monkeypatch):
    def boom(ctx):
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(report, "collect", boom)
    jobs: list = []
    with pytest.raises(RuntimeError, match="analysis failed"):
        _write(runs, tmp_path / "r.html", 10, monkeypatch, jobs)
    left = os.listdir(tmp_path)  # a trace finished before the failure may stay: it is whole
    assert set(left) <= {"r.pftrace"}, left  # no page, no staged trace
    assert len(jobs) == 1 and jobs[0].parallel and jobs[0]._proc.poll() is not None


def test_a_script_without_a_main_guard_runs_once(runs, tmp_path):
    """The trace's process is a fresh interpreter: a script (or notebook) that writes a report
    at its top level is not imported again by it."""
    script = tmp_path / "make_report.py"
    script.write_text(
        "import rocpd, rocpd.report as report\n"
        "from rocpd.report import trace_job\n"
        "trace_job.PARALLEL_ABOVE = 10\n"
        "print('script ran', flush=True)\n"
        f"with rocpd.connect(*{runs!r}) as db:\n"
        f"    print(report.write_files(db, {str(tmp_path / 'r.html')!r}, perfetto=True))\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("script ran") == 1 and "r.pftrace" in r.stdout, r.stdout
    assert (tmp_path / "r.pftrace").stat().st_size > 1000


def test_filters_that_cannot_be_sent_write_the_trace_here(runs, tmp_path, monkeypatch):
    """A trace whose process cannot be given its work is written in this process, as a small
    run's is, and the process started for it is stopped."""
    import pickle

    started = []

    def refuse(obj, fh):
        started.append(fh)
        raise pickle.PicklingError("cannot send this")

    monkeypatch.setattr(trace_job, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(trace_job.pickle, "dump", refuse)
    with rocpd.connect(*runs) as db:
        job = trace_job.TraceJob(db, str(tmp_path / "t.pftrace"), {})
    assert started and not job.parallel  # a process was started, then stopped
    assert job.result() == (str(tmp_path / "t.pftrace"), "")
    assert (tmp_path / "t.pftrace").stat().st_size > 1000


def test_a_process_that_dies_says_its_last_error_line(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_job, "_BOOT", "import sys; sys.exit('boom: no rocpd here')")
    job = trace_job.TraceJob.__new__(trace_job.TraceJob)
    job._done = None
    job._start([], str(tmp_path / "t.pftrace"), {})
    path, note = job.result()
    assert path is None and note.endswith("ended with code 1 (boom: no rocpd here)"), note
