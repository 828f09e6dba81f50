"""`rocpd energy`, the report's Energy section and `rocpd diff`'s energy per step."""

from __future__ import annotations

import pytest
from profiles import build

import rocpd
from rocpd.energy.section import report_section
from rocpd.report import context


@pytest.fixture(scope="module")
def counter_db(tmp_path_factory):
    return build(tmp_path_factory.mktemp("energy_cli") / "counter.db")


def test_cli_by_kernel_shows_idle_and_the_rules(cli, counter_db, tmp_path):
    out_csv = tmp_path / "e.csv"
    rc, out, err = cli("energy", counter_db, "--by", "kernel", "--csv", str(out_csv))
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "rocpd energy by kernel: GPU 0: counter, period 50 ms"
    assert any(" idle " in f" {x} " for x in lines) and "gemm_bf16" in out
    assert "note: kernels and lines share each counter period's energy" in out
    assert out_csv.read_text().splitlines()[0].startswith("process,rank,pid,kernel,Count,Joules")


def test_cli_by_step_with_units(cli, counter_db):
    rc, out, _ = cli("energy", counter_db, "--units-per-step", "512")
    assert rc == 0
    assert "step range: 'train_step'" in out and "JoulesPerUnit" in out


def test_report_section_only_with_energy(counter_db, run_db):
    with rocpd.connect(counter_db) as db:
        sec = report_section(context(db))
    assert sec is not None and sec.id == "energy"
    assert "Per step" in sec.html and "Per ROCTx range" in sec.html and "idle" in sec.html
    with rocpd.connect(run_db[0]) as db:
        assert report_section(context(db)) is None


def test_diff_compares_energy_per_step_when_both_have_it(counter_db, tmp_path, run_db):
    more = build(tmp_path / "more.db", overlap=True)
    d = rocpd.diff(counter_db, more)
    assert d.energy is not None and d.energy.iloc[0]["metric"] == "energy per step"
    assert d.energy.iloc[0]["BaseJ"] == pytest.approx(340.0, rel=0.02)
    assert "energy per step:" in d.text()
    # one side without: no energy row
    none = build(tmp_path / "none.db", source="none")
    assert rocpd.diff(counter_db, none).energy is None


def test_diff_verdict_and_tables_carry_a_significant_energy_change(cli, counter_db, tmp_path):
    # energy is judged as host-side time is: against a run-to-run noise of 5 % of a step here
    hungrier = build(tmp_path / "hungrier.db", scale=1.5)
    d = rocpd.diff(counter_db, hungrier, run_noise=0.05)
    row = d.energy.iloc[0]
    assert bool(row["significant"]) and row["verdict"] == "more", row
    assert row["DeltaJ"] == pytest.approx(0.5 * (340.0 - 120.0), rel=0.05)
    assert "energy per step more: +" in d.verdict()
    # the same work at the same power: the verdict says nothing of energy
    same = build(tmp_path / "same.db")
    assert "energy per step" not in rocpd.diff(counter_db, same, run_noise=0.05).verdict()
    rc, out, err = cli("diff", counter_db, hungrier, "--run-noise", "0.05", "--format", "csv", "-o",
                       str(tmp_path / "d"))
    assert rc == 0, err
    assert "energy per step more" in out
    assert (tmp_path / "d_energy.csv").read_text().splitlines()[0].startswith("metric,BaseJ,NewJ")
