"""Each output error names the path and the cause, before the program starts where it can:
over-long names, dangling links, %env{}% values that leave -d or name unset variables, a full
disk at start; outputs at exit that cannot be written say which file and why; `rocpd merge`
into a read-only folder names it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from support import WORKLOADS, _env, run_rocprof

SCRIPT = WORKLOADS / "nested_ranges.py"


def _refused(r, *words):
    """Exit 2 before the program ran, one line, naming what is wrong."""
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert '"argv"' not in r.stdout, "the program must not start"


@pytest.fixture
def tmpfs(tmp_path):
    """A real small file system: full (size one page, filled) or read-only."""
    mounted = []

    def make(*options):
        mnt = tmp_path / f"fs{len(mounted)}"
        mnt.mkdir()
        if shutil.which("mount") is None:
            pytest.skip("no mount command: this test needs a real small filesystem")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(mnt)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
        mounted.append(mnt)
        return mnt

    yield make
    for mnt in mounted:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_300_character_name_is_refused_naming_the_folder_and_the_limit(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "n" * 300, SCRIPT)
    _refused(r, f"cannot create '{tmp_path}/nnnn", "the file name is 311 bytes",
             "more than the file system's 255")


def test_outputs_that_cannot_be_written_each_say_which_file_and_why(tmp_path):
    name = "m" * 235  # the database fits; NAME_marker_api_trace.csv does not
    r = run_rocprof("run", "-d", tmp_path, "-o", name, "--stats", "-f", "csv", "json", SCRIPT)
    assert r.returncode == 0, r.stderr  # the program's status
    db = tmp_path / f"{name}_results.db"
    assert f"results written to {db}" in r.stderr
    failed = [ln for ln in r.stderr.splitlines() if "cannot write" in ln]
    assert {ln.split(" of ")[0] for ln in failed} == {"rocprof: --stats", "rocprof: -f csv"}, failed
    for ln in failed:
        assert f"{tmp_path}/{name}_" in ln and "File name too long (256-byte name; at most 255)" in ln
    assert f"rocprof: written {tmp_path / name}_results.json" in r.stderr, "json is still written"


def test_a_dangling_symlink_folder_is_named_with_its_target(tmp_path):
    (tmp_path / "out").symlink_to(tmp_path / "gone")
    r = run_rocprof("run", "-d", tmp_path / "out", SCRIPT)
    _refused(r, f"'{tmp_path / 'out'}'", "symbolic link", f"'{tmp_path / 'gone'}'", "does not exist")


@pytest.mark.parametrize("mode", ["script", "command"])
def test_env_placeholders_must_be_plain_names_of_set_variables(tmp_path, mode):
    target = [SCRIPT] if mode == "script" else ["--", sys.executable, SCRIPT]
    for value in ("../../x", "a/b", ".."):
        r = run_rocprof("run", "-d", tmp_path, "-o", "%env{ROCPROF_T_RUN}%", *target,
                        env={"ROCPROF_T_RUN": value})
        _refused(r, f"ROCPROF_T_RUN='{value}'", "holds '/' or '..'")
    r = run_rocprof("run", "-d", tmp_path, "-o", "x_%env{ROCPROF_T_UNSET}%", *target)
    _refused(r, "unset environment variable ROCPROF_T_UNSET")
    assert not list(tmp_path.rglob("*.db")) and not (tmp_path.parent / "x").exists()


def test_a_full_disk_at_start_says_so_once_naming_the_file(tmpfs):
    full = tmpfs("size=64k")
    fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:  # ENOSPC: the disk is full
        pass
    finally:
        os.close(fd)
    db = full / "x_results.db"
    r = run_rocprof("run", "-d", full, "-o", "x", SCRIPT)
    _refused(r, f"cannot create the database {db}: database or disk is full")
    assert not db.exists(), "no empty file left for readers to trip on"
    r = run_rocprof("run", "-d", full, "-o", "x", "--", sys.executable, "-c",
                    "import roctx; roctx.mark('m'); raise SystemExit(3)")
    assert r.returncode == 3, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"cannot create the database {db}: database or disk is full" \
        in lines[0], r.stderr


def test_merge_into_a_read_only_folder_names_it(tmpfs, tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "a", SCRIPT)
    assert r.returncode == 0, r.stderr
    ro = tmpfs("size=64k", "ro")
    r = subprocess.run([sys.executable, "-m", "rocpd", "merge", tmp_path / "a_results.db",
                        "-o", ro / "m.db"], env=_env(), capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.strip() == (f"rocpd: error: {ro / 'm.db'}: cannot create the merged database: "
                                f"its folder {ro} is not writable"), r.stderr
