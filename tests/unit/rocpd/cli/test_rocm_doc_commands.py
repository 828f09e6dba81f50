"""ROCm's documented rocpd command lines and Python snippets, run as written against databases made
with the fixture helpers: each exits 0 and writes what it says.

Sources (ROCm/rocm-systems, projects/rocprofiler-sdk/source/):
  M = lib/python/rocpd/__main__.py (the epilog examples of convert, merge, package, query, summary)
  D = docs/how-to/using-rocpd-output-format.rst (conversion examples)
  R = lib/python/rocpd/README.md (Python: "Loading Databases", "Executing Queries")
Shell brace expansion (db{0..5}.db) and globs are expanded here as a shell would; "~" is HOME.
"""

from __future__ import annotations

import glob
import os
import re
import shlex

import pytest

import rocpd
from rocpd.cli import main
from rocpd.testing import DatabaseBuilder


def make_hip_run(path, pid: int) -> None:
    """An AMD-style run: HIP API launches, kernels, a copy, an allocation and ROCTx markers."""
    with DatabaseBuilder(path, pid=pid, hostname=f"node{pid % 10}") as b:
        t = 1_000_000
        b.marker("epoch", t, t + 100_000)
        for i in range(20):
            corr = b.next_correlation()
            s = t + 100 + i * 4000
            b.region("HIP_RUNTIME_API_EXT", "hipLaunchKernel", s, s + 40, correlation_id=corr)
            b.kernel(("gemm", "relu")[i % 2], s + 200, s + 1200 + 10 * i, correlation_id=corr)
        b.region("HSA_CORE_API", "hsa_queue_create", t + 5, t + 50)
        b.memory_copy("MEMORY_COPY_HOST_TO_DEVICE", t + 60, t + 90, 4096)
        b.allocation("ALLOC", t + 1, t + 3, 4096)
        b.marker(f"rank-{pid}", t + 10, t + 99_000)


# (source, command line as documented, files it must write)
COMMANDS = [
    ("M", 'rocpd convert -i db1.db --output-format pftrace', ["rocpd-output-data/out_results.pftrace"]),
    ("M", 'rocpd convert -i db1.db db2.db --output-format pftrace -d "./output/" -o "twoFileTraces"'
          ' --start 30% --end 100%', ["output/twoFileTraces_results.pftrace"]),
    ("M", 'rocpd convert -i db{0..5}.db --output-format csv pftrace -d "~/output_folder/"'
          ' -o "sixFileTraces"', ["~/output_folder/sixFileTraces_kernel_trace.csv",
                                  "~/output_folder/sixFileTraces_hip_api_trace.csv",
                                  "~/output_folder/sixFileTraces_results.pftrace"]),
    ("M", 'rocpd convert -i db{3,4}.db --output-format csv otf2 pftrace',
     ["rocpd-output-data/out_kernel_trace.csv", "rocpd-output-data/out_results.otf2",
      "rocpd-output-data/out_results.pftrace"]),
    ("D", 'rocpd convert -i db0.db --output-format csv', ["rocpd-output-data/out_hip_api_trace.csv"]),
    ("D", 'rocpd convert -f csv -i db0.db', ["rocpd-output-data/out_kernel_trace.csv"]),
    ("D", 'rocpd convert -i db0.db --output-format otf2', ["rocpd-output-data/out_results.otf2"]),
    ("M", 'rocpd merge -i db0.db db1.db db2.db -d merged3DBs', ["merged3DBs/merged.db"]),
    ("M", 'rocpd merge -i node0/*.db -d node0_output -o largeMerged', ["node0_output/largeMerged.db"]),
    ("M", 'rocpd package -i node0/db0.db node1/db1.db node2/db2.db', ["index.yaml"]),
    ("M", 'rocpd package -i node0/db0.db node1/db1.db node2/db2.db -d my_MPI_run_1 --consolidate'
          ' --copy', ["my_MPI_run_1.rpdb/index.yaml", "my_MPI_run_1.rpdb/db2.db"]),
    ("M", 'rocpd package -i my_MPI_run_1.rpdb node5/db5.db -d my_MPI_run_1_append_5 --consolidate'
          ' --copy', ["my_MPI_run_1_append_5.rpdb/db5.db", "my_MPI_run_1_append_5.rpdb/db0.db"]),
    ("M", 'rocpd package -i my_MPI_run_1.rpdb node7/db7.db -d my_MPI_run_1 --consolidate',
     ["my_MPI_run_1.rpdb/db7.db"]),
    # ROCm's example names a view "rocpd_info_agents" that its own schema does not define (the
    # view is rocpd_info_agent); run with the real name.
    ("M", 'rocpd query -i db0.db --query "SELECT * FROM rocpd_info_agent LIMIT 5"', []),
    ("M", 'rocpd query -i db{0..3}.db --query "SELECT * FROM top_kernels LIMIT 10" --format csv',
     ["rocpd-output-data/out.csv"]),
    ("M", 'rocpd summary -i db1.db --domain-summary', []),
    ("M", 'rocpd summary -i db{1..3}.db --summary-by-rank --format csv',
     ["rocpd-output-data/kernels_summary.csv", "rocpd-output-data/kernels_summary_by_rank.csv",
      "rocpd-output-data/hip_summary_by_rank.csv", "rocpd-output-data/markers_summary.csv"]),
    ("M", 'rocpd summary -i db0.db --region-categories NONE', []),
    ("M", 'rocpd summary -i db{0,1}.db --region-categories HIP MARKERS --domain-summary --format html',
     ["rocpd-output-data/hip_summary.html", "rocpd-output-data/markers_summary.html",
      "rocpd-output-data/domain_summary.html"]),
]


def _braces(token: str) -> list[str]:
    m = re.search(r"\{(\d+)\.\.(\d+)\}|\{([^{}]*,[^{}]*)\}", token)
    if not m:
        return [token]
    items = ([str(i) for i in range(int(m[1]), int(m[2]) + 1)] if m[1] is not None
             else m[3].split(","))
    return [w for it in items for w in _braces(token[:m.start()] + it + token[m.end():])]


def shell_words(command: str) -> list[str]:
    words = [w for tok in shlex.split(command) for w in _braces(tok)]
    # a quoted SQL text holds "*" and spaces; a shell glob here holds no space
    return [w2 for w in words for w2 in (sorted(glob.glob(w)) if "*" in w and " " not in w else [w])]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ROCPD_OUTPUT_PATH", raising=False)
    monkeypatch.delenv("ROCPD_OUTPUT_NAME", raising=False)
    for i in range(6):
        make_hip_run(tmp_path / f"db{i}.db", pid=1000 + i)
    for i in (0, 1, 2, 5, 7):
        os.makedirs(tmp_path / f"node{i}")
        make_hip_run(tmp_path / f"node{i}" / f"db{i}.db", pid=2000 + i)
    return tmp_path


def test_documented_command_lines(workdir, capsys):
    for source, command, outputs in COMMANDS:
        argv = shell_words(command)
        assert argv[0] == "rocpd"
        assert main(argv[1:]) == 0, (source, command, capsys.readouterr().err)
        out = capsys.readouterr().out
        for path in outputs:
            full = os.path.expanduser(path)
            assert os.path.exists(full), (source, command, path, sorted(os.listdir(workdir)))
            if os.path.isfile(full) and not full.endswith(".otf2"):
                assert os.path.getsize(full) > 0, (command, path)
        if "summary" in argv and "--format" not in argv:
            assert "KERNELS_SUMMARY:" in out, (command, out)
        if "--region-categories" in argv and "NONE" in argv:
            assert "HIP_SUMMARY" not in out and "MARKERS_SUMMARY" not in out
        if argv[1] == "query" and "--format" not in argv:
            assert "gpu0" in out, out
    # the packages just made open as one input, as ROCm's -i takes them
    assert len(rocpd.connect("my_MPI_run_1.rpdb").paths) == 4
    assert len(rocpd.connect("my_MPI_run_1_append_5.rpdb").paths) == 4
    assert rocpd.connect("index.yaml").execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 60
    assert rocpd.connect("merged3DBs/merged.db").execute(
        "SELECT COUNT(*) FROM kernels").fetchone()[0] == 60


def test_readme_python_snippets(workdir, capsys):
    # R, "Loading Databases" and "Executing Queries", with A.db/B.db made here
    os.rename("db0.db", "A.db")
    os.rename("db1.db", "B.db")
    input = ["A.db", "B.db"]  # noqa: A001 - as the README writes it
    rpd_data = rocpd.connect(input)

    for itr in rpd_data.execute("SELECT * FROM kernels"):
        print(f"{itr}")

    cursor = rpd_data.cursor()
    for itr in cursor.execute("SELECT * FROM top").fetchall():
        print(f"{itr}")

    out = capsys.readouterr().out.splitlines()
    assert len(out) == 40 + len(rpd_data.execute("SELECT * FROM top").fetchall())
    assert isinstance(rpd_data, rocpd.RocpdImportData)
