"""`rocpd query --email-to A --email-from B` with no --format: ROCm's query prints the table, says
that no file was exported, mails nothing and exits 0; ours answers the same."""

from __future__ import annotations

import os

from rocpd.cli import main as our_rocpd

QUERY = "SELECT name, count(*) AS calls FROM kernels GROUP BY name ORDER BY name"


def test_mail_without_a_file_is_no_error(rocm, rocm_db, tmp_path, capsys):
    args = ("query", "-i", rocm_db[0], "--query", QUERY, "--email-to", "a@b.org",
            "--email-from", "c@d.org")
    theirs = rocm.cli(*args, cwd=tmp_path, check=False)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc = our_rocpd([str(a) for a in args])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert (rc, theirs.returncode) == (0, 0), theirs.stderr
    said = "No file was exported; skipping email."
    assert said in theirs.stdout and said in out
    for name in ("vector_add", "reduce_sum"):  # the table, in both
        assert name in theirs.stdout and name in out
    assert not os.listdir(tmp_path)  # nothing written
