"""A run without GPU work is analysed from its ROCTx phases and call-stack samples: the findings
(`rocpd analyze`), the report (HTML, Markdown) and `rocprof run -S` name the slowest phase, the
spread of the step times and the hottest sampled lines, with a flame graph in the report; the
GPU path shows none of it."""

from __future__ import annotations

import analysis_patterns as P
import pytest

import rocpd
from rocpd import report
from rocpd.summary import run as run_summary
from rocpd.testing import DatabaseBuilder
from rocpd.textfmt import TOP_ROWS

MS = 1_000_000
T = 10 * MS
TAKEN = 297


def cpu_run(path, steps: int = 6, extra_lines: int = 0):
    """``steps`` steps of a 'load' then a 'compute' phase; the first step is three times as
    long (warm-up); samples: compute at train.py:42 (7 of 8), load at data.py:7."""
    with DatabaseBuilder(path, pid=4242) as b:
        at = T
        for s in range(steps):
            step = 30 * MS if s == 0 else 10 * MS
            b.marker("step", at, at + step)
            b.marker("load", at, at + step // 5)
            b.marker("compute", at + step // 5, at + step)
            for k in range(8):
                ts = at + k * step // 8
                frame = ("load", "data.py", 7) if k == 0 else ("compute", "train.py", 42)
                b.sample(None, ts, call_stack=[("<module>", "train.py", 1), ("main", "train.py", 9),
                                               frame])
            at += step + MS
        for i in range(extra_lines):  # many distinct lines, one sample each
            b.sample(None, at + i, call_stack=[("<module>", "train.py", 1), ("misc", "util.py", i + 1)])
        b.metadata("rocprof.dropped_records", 3)
        b.metadata("rocprof.dropped_records.sampling", 3)
        b.metadata("rocprof.sampling.samples_taken", TAKEN)
    return str(path)


@pytest.fixture
def cpu(tmp_path):
    return cpu_run(tmp_path / "cpu.db")


def test_analyze_names_the_slowest_phase_the_step_spread_and_the_hottest_line(cli, cpu):
    rc, out, err = cli("analyze", cpu)
    assert rc == 0, err
    findings = out.split("== FINDINGS ==", 1)[1].split("\n== ", 1)[0]
    assert "no GPU work was recorded: the findings below come from the ROCTx ranges" in findings
    assert "nothing to break down" not in findings
    assert "[info] slowest phase: ROCTx range 'compute' takes 75 % of the wall time" in findings
    assert "step time varies: the first step of 'step' takes 30.000 ms, 3.0× the median step" in findings
    assert "[info] hottest sampled lines: train.py:42 (88 %), data.py:7 (12 %)" in findings
    assert "== ROCTX PHASES" in out and "== HOTTEST SAMPLED LINES" in out
    assert "not shown: phases" not in out and "not shown: hot-lines" not in out


def test_gpu_runs_keep_their_own_sections(cli, tmp_path):
    path = P.gpu_bound(tmp_path / "gb.db")
    rc, out, _ = cli("analyze", path)
    assert rc == 0
    assert "== ROCTX PHASES" not in out and "HOTTEST SAMPLED" not in out and "phases" not in out
    with rocpd.connect(path) as db:
        rules = [f.rule for f in rocpd.analysis.analyze(db).findings()]
    assert not {"slowest-phase", "step-spread", "hot-lines"} & set(rules)


def test_html_report_has_the_phases_table_and_a_flame_graph(cpu, tmp_path):
    with rocpd.connect(cpu) as db:
        page = report.build(db)
    section = page[page.index("<section id='cpu'>"):]
    section = section[:section.index("</section>")]
    assert "<h3>ROCTx phases</h3>" in section and "compute" in section and "WallPercent" in section
    assert "<h3>Hottest sampled lines</h3>" in section and "train.py:42" in section
    assert "<svg" in section and "compute (train.py)" in section  # the flame graph's frame


def test_markdown_report_writes_the_flame_graph_beside_it(cpu, tmp_path):
    with rocpd.connect(cpu) as db:
        written = report.write_files(db, str(tmp_path / "r.md"))
    md = (tmp_path / "r.md").read_text()
    assert "**ROCTx phases**" in md and "![flamegraph](r_files/flamegraph.svg)" in md
    assert str(tmp_path / "r_files" / "flamegraph.svg") in written
    assert (tmp_path / "r_files" / "flamegraph.svg").read_text().startswith("<svg")


def test_missed_samples_are_one_finding_in_every_output(cli, cpu):
    """The same 3 missed samples: one text (and no 'records dropped … trace less') in -S, in
    rocpd analyze and in rocpd summary's drop counts."""
    words = f"3 of {TAKEN + 3} call-stack samples were not taken or not stored (1 %)"
    s = run_summary.text([cpu])
    _, analyzed, _ = cli("analyze", cpu)
    _, summary, _ = cli("summary", cpu)
    for text in (s, analyzed, summary):
        assert words in text and "sample less often (--sample HZ)" in text
        assert "trace less" not in text and "records were dropped" not in text
    assert "Dropped records: 3, all of them call-stack samples" in summary


def test_run_summary_fits_one_screen_and_names_how_to_see_the_rest(tmp_path):
    path = cpu_run(tmp_path / "wide.db", steps=40, extra_lines=200)
    text = run_summary.text([path])
    assert len(text.splitlines()) <= 60, text
    assert "(use rocpd samples DB --lines --all)" in text
    assert "== TOP FINDINGS (3 of" in text and f"all of them: rocpd analyze {path}" in text


def test_analyze_cuts_tables_to_the_shared_row_limit(cli, tmp_path):
    path = cpu_run(tmp_path / "wide.db", extra_lines=30)
    _, out, _ = cli("analyze", path, "--section", "hot-lines")
    rows = out.split("== HOTTEST SAMPLED LINES ==\n", 1)[1].strip().splitlines()
    assert len(rows) == 1 + TOP_ROWS + 1 and rows[-1] == f"… and {32 - TOP_ROWS} more (use --all)"
    _, out, _ = cli("analyze", path, "--section", "hot-lines", "--all")
    rows = out.split("== HOTTEST SAMPLED LINES ==\n", 1)[1].strip().splitlines()
    assert len(rows) == 1 + 32 and "more (use" not in out
