"""`rocprof run` in a shared output folder: a link planted at the name of any output (-f json csv
pftrace otf2, --stats, -S --summary-output-file) is replaced by that output; the file it points
at is never written, nor created where it is missing."""

from __future__ import annotations

import os
import re

from support import WORKLOADS, run_rocprof

NAMED = re.compile(r"^rocprof: (?:stats written to|written|summary written to) (.+)$", re.M)


def _run(folder):
    r = run_rocprof("run", "-d", folder, "-o", "x", "--stats", "-S", "--summary-output-file",
                    folder / "sum.txt", "-f", "json", "csv", "pftrace", "otf2", "--",
                    WORKLOADS / "exit_with.py", "code", "0")
    assert r.returncode == 0, r.stderr
    return {p for p in NAMED.findall(r.stderr) if os.path.isfile(p)}  # -f csv repeats --stats


def test_links_at_every_output_of_a_run_are_replaced_not_followed(tmp_path):
    first = tmp_path / "first"
    names = sorted(os.path.relpath(p, first) for p in _run(first))
    assert {"sum.txt", "x_results.json", "x_results.pftrace", "x_marker_api_stats.csv"} <= \
        set(names), names
    assert any(n.endswith("_trace.csv") for n in names), names
    shared, victims = tmp_path / "shared", tmp_path / "victims"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    victims.mkdir()
    planted = {}
    for i, rel in enumerate(names):
        (shared / rel).parent.mkdir(parents=True, exist_ok=True)
        target = victims / str(i)
        if i % 2 == 0:  # every other link dangles: following it would create the file
            target.write_text("not yours\n")
        (shared / rel).symlink_to(target)
        planted[rel] = target
    assert sorted(os.path.relpath(p, shared) for p in _run(shared)) == names
    for i, (rel, target) in enumerate(planted.items()):
        assert not (shared / rel).is_symlink() and (shared / rel).stat().st_size > 0, rel
        assert target.read_text() == "not yours\n" if i % 2 == 0 else not target.exists(), rel
    assert sorted(os.listdir(victims)) == sorted(str(i) for i in range(0, len(names), 2))
    assert (shared / "x_results.json").read_text().startswith("{")
