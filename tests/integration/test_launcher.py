"""The launcher as a user meets it: exit codes, output naming, bad input, secrets, stats."""

from __future__ import annotations

import json
import os
import socket

import rocprof
from support import MESSAGE, WORKLOADS, open_db, run_rocprof


def regions(db):
    return [r[0] for r in open_db(db).execute(f"SELECT {MESSAGE} FROM regions_and_samples ORDER BY start")]


def test_exit_code_passes_through(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "x", WORKLOADS / "exit_with.py", "code", "7")
    assert r.returncode == 7
    assert regions(tmp_path / "x_results.db") == ["before-exit"]


def test_uncaught_exception_prints_user_traceback_and_exits_1(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "x", WORKLOADS / "exit_with.py", "raise")
    assert r.returncode == 1
    assert "ValueError: boom from the workload" in r.stderr
    assert 'in inner' in r.stderr and "exit_with.py" in r.stderr
    launcher = os.path.join(os.path.dirname(os.path.abspath(rocprof.__file__)), "cli")
    assert "runpy" not in r.stderr and launcher not in r.stderr, r.stderr
    assert regions(tmp_path / "x_results.db") == ["before-exit"]


def test_sys_exit_message(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, WORKLOADS / "exit_with.py", "message")
    assert r.returncode == 1 and "fatal: a message" in r.stderr


def test_os_exit_still_leaves_complete_database(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "x", WORKLOADS / "exit_with.py", "os_exit", "5")
    assert r.returncode == 5
    db = tmp_path / "x_results.db"
    assert regions(db) == ["before-exit", "about to os._exit"]
    fini = open_db(db).execute("SELECT fini FROM rocpd_info_process").fetchone()[0]
    assert fini > 0, "the session was closed before the process left"


def test_run_module(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "m", "-m", "pkg_mod", "a1", cwd=WORKLOADS)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout.strip().splitlines()[-1])
    assert facts["name"] == "__main__" and facts["argv"][1:] == ["a1"]
    assert regions(tmp_path / "m_results.db") == ["module-main"]


def test_double_dash_form_and_default_path(tmp_path):
    r = run_rocprof("run", "--", WORKLOADS / "secrets_env.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    host = socket.gethostname()
    dbs = list((tmp_path / "rocprof-output" / host).glob("*_results.db"))
    assert len(dbs) == 1 and dbs[0].name.split("_")[0].isdigit(), dbs
    assert str(dbs[0].name) in r.stderr


def test_placeholders(tmp_path):
    r = run_rocprof("run", "-d", str(tmp_path) + "/%hostname%/%env{RUN_TAG}%", "-o", "r%rank%_%pid%",
                    WORKLOADS / "secrets_env.py", env={"RUN_TAG": "tagged", "RANK": "3"})
    assert r.returncode == 0, r.stderr
    dbs = list((tmp_path / socket.gethostname() / "tagged").glob("r3_*_results.db"))
    assert len(dbs) == 1, list(tmp_path.rglob("*"))


def test_secrets_are_redacted(tmp_path):
    env = {"MY_API_TOKEN": "tok-123-secret", "DB_PASSWORD": "hunter2", "AWS_SECRET_ACCESS_KEY": "k",
           "HARMLESS_SETTING": "visible-value"}
    r = run_rocprof("run", "-d", tmp_path, "-o", "s", WORKLOADS / "secrets_env.py", env=env)
    assert r.returncode == 0, r.stderr
    raw = open_db(tmp_path / "s_results.db").execute(
        "SELECT environment FROM rocpd_info_process").fetchone()[0]
    environment = json.loads(raw)
    for name in ("MY_API_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY"):
        assert environment[name] == "<redacted>"
    assert environment["HARMLESS_SETTING"] == "visible-value"
    data = (tmp_path / "s_results.db").read_bytes()
    assert b"hunter2" not in data and b"tok-123-secret" not in data


def _one_line_error(r, *words):
    assert r.returncode != 0
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_missing_script(tmp_path):
    _one_line_error(run_rocprof("run", "-d", tmp_path, tmp_path / "nope.py"), "not found", "nope.py")
    assert not list(tmp_path.glob("*.db"))


def test_missing_module_fails_as_python_m_does_and_records_nothing(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-m", "no_such_module", "a1", cwd=tmp_path)
    _one_line_error(r, "no module named 'no_such_module'")
    assert r.returncode == 1 and not list(tmp_path.rglob("*.db"))
    # one in the current folder is found, as python -m finds it
    (tmp_path / "here_mod.py").write_text("print('ran')\n")
    r = run_rocprof("run", "-d", tmp_path, "-o", "h", "-m", "here_mod", cwd=tmp_path)
    assert r.returncode == 0 and "ran" in r.stdout, r.stderr


def test_unknown_option(tmp_path):
    _one_line_error(run_rocprof("run", "--kernal-trace", "x.py"), "--kernal-trace", "--help")


def test_nothing_to_run():
    _one_line_error(run_rocprof("run"), "nothing to run")


def test_unwritable_output_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where a folder should be")
    _one_line_error(run_rocprof("run", "-d", blocker / "sub", WORKLOADS / "secrets_env.py"),
                    str(blocker), "it is a file")


def test_unknown_placeholder(tmp_path):
    _one_line_error(run_rocprof("run", "-d", tmp_path, "-o", "%bogus%", WORKLOADS / "secrets_env.py"),
                    "%bogus%")


def test_bad_regex_and_sample_rate(tmp_path):
    _one_line_error(run_rocprof("run", "--kernel-include-regex", "([", WORKLOADS / "secrets_env.py"),
                    "invalid kernel regex")
    # One dialect: what capture's POSIX engine would read differently is refused up front.
    for pattern in (r"gemm_\d+", "(?i)gemm"):
        _one_line_error(run_rocprof("run", "--kernel-include-regex", pattern,
                                    WORKLOADS / "secrets_env.py"), "POSIX extended syntax")
    _one_line_error(run_rocprof("run", "--sample", "0", WORKLOADS / "secrets_env.py"), "--sample")


def test_explicit_gpu_request_without_backend_says_so(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "--kernel-trace", WORKLOADS / "secrets_env.py")
    assert r.returncode == 0
    import rocprof.backends as b  # noqa: F401 - importable from the checkout

    statuses = {s["name"]: s for s in __import__("rocprof.backends").backends.statuses()}
    if not (statuses["cupti"]["live"] or statuses["hsa"]["live"]):
        assert "GPU tracing requested but no GPU backend is live" in r.stderr


def test_stats_and_summary(tmp_path):
    r = run_rocprof("run", "-d", tmp_path, "-o", "st", "--stats", "-S", WORKLOADS / "nested_ranges.py")
    assert r.returncode == 0, r.stderr
    csv_path = tmp_path / "st_marker_api_stats.csv"
    assert csv_path.exists()
    header = csv_path.read_text().splitlines()[0].replace('"', "").split(",")
    assert header == ["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage", "MinNs",
                      "MaxNs", "StdDev"]
    assert "inner" in r.stdout and "TotalDurationNs" in r.stdout and "Dropped records" in r.stdout
    # -S ends with the top findings (a CPU-only run: the caveat that there is no GPU work)
    findings = r.stdout[r.stdout.index("== TOP FINDINGS"):]
    assert r.stdout.index("Dropped records") < r.stdout.index("== TOP FINDINGS")
    assert "1. [caveat] no GPU work was recorded" in findings


def test_info_explains_backends():
    r = run_rocprof("info")
    assert r.returncode == 0
    for name in ("markers", "cupti", "hsa", "sampling"):
        assert name in r.stdout
    assert "not yet run on AMD hardware" in r.stdout


def test_in_process_profile_api(tmp_path):
    code = (
        "import rocprof, roctx\n"
        f"with rocprof.profile(output_dir={str(tmp_path)!r}, output_file='inproc') as s:\n"
        "    with roctx.range('inside'):\n        pass\n"
        "with roctx.range('outside'):\n    pass\n"
        "print(s.path)\n"
    )
    import subprocess
    import sys

    from support import _env

    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "inproc_results.db")
    assert regions(tmp_path / "inproc_results.db") == ["inside"]
    assert os.path.getsize(tmp_path / "inproc_results.db") > 0


def test_sampled_thread_that_blocks_sigprof_is_named_as_the_cause(tmp_path):
    # The program inherits a mask that blocks SIGPROF (as from a parent that blocked it).
    import signal

    r = run_rocprof("run", "-d", tmp_path, "-o", "b", "--sample", "100", "--sampling-mode",
                    "wall", WORKLOADS / "sleep_for.py", "0.3",
                    preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF}))
    assert r.returncode == 0, r.stderr
    with open_db(tmp_path / "b_results.db") as c:
        meta = dict(c.execute("SELECT tag, value FROM rocpd_metadata"))
    assert meta["rocprof.sampling.samples_taken"] == "0"
    assert meta["rocprof.sampling.no_samples"].startswith("SIGPROF is blocked in the sampled threads")
