"""The export registry: each rocpd/export/<format>.py declares its name, aliases, suffix and
target kind; `rocpd convert`, `rocprof run -f` and their help read the registry."""

from __future__ import annotations

import argparse
import importlib
import os

from rocpd import export
from rocpd.testing import DatabaseBuilder


def test_every_exporter_declares_itself_and_is_found_without_importing_it():
    found = {f.name: f for f in export.formats()}
    assert set(found) == {"chrome", "collapsed", "csv", "flamegraph", "otf2", "perfetto"}
    for fmt in found.values():
        module = importlib.import_module(f"rocpd.export.{fmt.name}")
        assert module.FORMAT.get("suffix") == fmt.suffix and callable(module.write)
        assert fmt.target in export.TARGETS
    assert export.find("PFTRACE").name == "perfetto" and export.find("svg").name == "flamegraph"


def test_rocprof_run_and_rocpd_convert_offer_the_registry():
    from rocprof.cli import run as run_cli

    from rocpd.cli import convert

    p = argparse.ArgumentParser()
    run_cli.add_parser(p)
    [f] = [a for a in p._actions if "-f" in a.option_strings]
    assert list(f.choices) == ["csv", "json", "pftrace", "otf2", "rocpd"]  # rocprofv3's order
    assert "json (Chrome trace)" in f.help and "pftrace (Perfetto)" in f.help
    sub = argparse.ArgumentParser().add_subparsers()
    convert.add_parser(sub)
    [c] = [a for a in sub.choices["convert"]._actions if "--format" in a.option_strings]
    assert sorted(c.choices) == sorted(export.names())


def test_the_target_kind_names_what_is_written(tmp_path):
    db = tmp_path / "run1_results.db"
    with DatabaseBuilder(db, pid=5) as b:
        b.kernel("gemm", 100, 200)
    from rocprof import run_report

    import rocpd

    (tmp_path / "out").mkdir()
    with rocpd.connect(str(db)) as con:
        json_file = export.find("json").write_named(con, str(tmp_path / "out"), "r")
        csvs = export.find("csv").write_named(con, str(tmp_path), "p")
    assert json_file == [str(tmp_path / "out" / "r_results.json")]
    assert str(tmp_path / "p_kernel_trace.csv") in csvs
    # rocprof run -f: beside the database, by its prefix (json is chrome's rocprofv3 name)
    written = run_report.write_format(str(db), "json")
    assert written == [str(tmp_path / "run1_results.json")] and os.path.exists(written[0])
    assert run_report.write_format(str(db), "rocpd") == []
