"""A link planted at the name an output will take (a shared 0777/1777 output folder) is replaced by
the output; the file it points at is never written, nor created where it is missing."""

from __future__ import annotations

import os
import re

import pytest

from rocpd.io.output_file import open_output, staged

COMMANDS = {
    "convert chrome": ["convert", "run.db", "-f", "chrome", "-o", "{out}/trace.json"],
    "convert csv": ["convert", "run.db", "-f", "csv", "-o", "{out}/csv"],
    "convert pftrace (ROCm's naming)": ["convert", "-i", "run.db", "-f", "pftrace", "-d", "{out}",
                                        "-o", "r"],
    "convert collapsed": ["convert", "run.db", "-f", "collapsed", "-o", "{out}/s.folded"],
    "convert flamegraph": ["convert", "run.db", "-f", "flamegraph", "-o", "{out}/s.svg"],
    "convert otf2": ["convert", "-i", "run.db", "-f", "otf2", "-d", "{out}", "-o", "r"],
    "summary --csv": ["summary", "run.db", "--csv", "{out}/sum"],
    "summary csv (ROCm's naming)": ["summary", "-i", "run.db", "--format", "csv", "-d", "{out}"],
    "query csv": ["query", "run.db", "--sql", "SELECT 1 AS one", "-f", "csv", "-o", "{out}/q.csv"],
    "merge": ["merge", "run.db", "-o", "{out}/merged.db", "--force"],
    "report": ["report", "run.db", "-o", "{out}/report.html"],
    "analyze csv": ["analyze", "run.db", "--format", "csv", "-o", "{out}/an"],
    "package": ["package", "run.db", "-d", "{out}/pkg"],
}


def _run(cli, argv, out) -> list[str]:
    rc, stdout, err = cli(*[a.format(out=out) for a in argv])
    assert rc == 0, (argv, err)
    written = re.findall(r"^wrote (.+)$", stdout, flags=re.M)
    written += re.findall(r"^rocpd package created at: (.+)$", stdout, flags=re.M)
    return [p for p in written if os.path.isfile(p)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_links_at_every_output_are_replaced_not_followed(tmp_path, monkeypatch, cli, make_run,
                                                          name):
    make_run(tmp_path / "run.db")
    monkeypatch.chdir(tmp_path)
    first = tmp_path / "first"
    first.mkdir()
    names = [os.path.relpath(p, first) for p in _run(cli, COMMANDS[name], "first")]
    assert names, name
    shared, victims = tmp_path / "shared", tmp_path / "victims"
    shared.mkdir(mode=0o1777)
    victims.mkdir()
    planted = {}
    for i, rel in enumerate(names):
        link = shared / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        target = victims / f"{i}"
        if i % 2 == 0:  # every other link dangles: following it would create the file
            target.write_text("not yours\n")
        link.symlink_to(target)
        planted[rel] = target
    again = [os.path.relpath(p, shared) for p in _run(cli, COMMANDS[name], "shared")]
    assert sorted(again) == sorted(names), name
    for i, (rel, target) in enumerate(planted.items()):
        out = shared / rel
        assert not out.is_symlink() and out.stat().st_size > 0, (name, rel)
        if i % 2 == 0:
            assert target.read_text() == "not yours\n", (name, rel)
        else:
            assert not target.exists(), (name, rel)
    assert sorted(os.listdir(victims)) == sorted(str(i) for i in range(0, len(names), 2))
    leftovers = [f for _, _, files in os.walk(shared) for f in files if f.endswith(".tmp")]
    assert not leftovers, leftovers


def test_a_writer_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.csv"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), open_output(path) as fh:
        fh.write("half")
        raise RuntimeError("stopped")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_the_file_is_written_where_no_one_else_can_reach_it(tmp_path):
    with staged(tmp_path / "x.db") as inner:
        folder = os.path.dirname(inner)
        assert os.path.dirname(folder) == str(tmp_path)
        assert os.stat(folder).st_mode & 0o077 == 0
        open(inner, "w").close()
    assert os.listdir(tmp_path) == ["x.db"]


def test_a_folder_at_the_path_is_refused_as_open_refuses_it(tmp_path):
    (tmp_path / "out.json").mkdir()
    with pytest.raises(IsADirectoryError) as e, open_output(tmp_path / "out.json") as fh:
        fh.write("{}")
    assert e.value.filename == str(tmp_path / "out.json")
    assert os.listdir(tmp_path) == ["out.json"]
