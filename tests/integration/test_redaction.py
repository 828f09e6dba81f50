"""Secrets never recorded: a real run with secrets in the script's argv (by flag name, by
=-form, -p, NAME=VALUE and by value shape) and in ROCTx text (URL credentials, tokens), read
back from every table of the database, its raw bytes, and every export and summary."""

from __future__ import annotations

import json

from support import MESSAGE, WORKLOADS, open_db, run_rocprof

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ARGV_SECRETS = ["hunter2-flag-pw", GH, "P@ssw0rd!x9", "hydra-pw-0451", "sk-" + "Ab3" * 12]
ROCTX_SECRETS = ["url-pw-one", "url-pw-two", "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"]
CHILD_SECRETS = ["child-key-Secret-123"]


def _run(tmp_path, *extra):
    return run_rocprof("run", "-d", tmp_path, "-o", "s", *extra, "-f", "csv", "json", "pftrace",
                       "otf2", "--stats", "-S", WORKLOADS / "secrets_argv.py",
                       "--password", ARGV_SECRETS[0], f"--token={GH}", "-p", ARGV_SECRETS[2],
                       f"db.password={ARGV_SECRETS[3]}", "--openai", ARGV_SECRETS[4],
                       "--max-tokens", "512", timeout=300)


def _redacted(db):
    (value,) = open_db(db).execute(
        "SELECT value FROM rocpd_metadata WHERE tag = 'rocprof.redacted'").fetchone()
    return json.loads(value)


def test_secrets_reach_no_table_file_or_export(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stderr
    parent, child = tmp_path / "s_results.db", None
    dbs = sorted(tmp_path.rglob("*.db"))
    assert parent in dbs and len(dbs) == 2, dbs
    child = next(d for d in dbs if d != parent)

    (command,) = open_db(parent).execute("SELECT command FROM rocpd_info_process").fetchone()
    assert ("--password <redacted> --token=<redacted> -p <redacted> db.password=<redacted> "
            "--openai <redacted> --max-tokens 512") in command
    (child_command,) = open_db(child).execute("SELECT command FROM rocpd_info_process").fetchone()
    assert child_command.endswith("--child --api-key <redacted>")

    con = open_db(parent)
    texts = {row[0] for row in con.execute("SELECT string FROM rocpd_string")}
    # ROCTx text is kept, credentials cut; two messages cut to one text stay two strings.
    assert "fetch https://alice:<redacted>@db.example/x" in texts
    assert any(t.startswith("fetch https://alice:<redacted>@db.example/x #") for t in texts)
    assert "auth with <redacted>" in texts and "loader <redacted>" in texts
    assert "hf_model_forward_pass_step2" in texts
    names = [n for (n,) in con.execute(f"SELECT {MESSAGE} FROM regions ORDER BY start")]
    assert len(names) == 3 and names[0] == "fetch https://alice:<redacted>@db.example/x"
    counts = _redacted(parent)
    assert counts["command"] == 5 and counts["text"] == 4 and counts["text_redaction"] == "on"
    assert _redacted(child)["command"] == 1

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    exports = {p.suffix for p in files}
    assert {".db", ".csv", ".json", ".pftrace", ".otf2"} <= exports, exports
    # The exports carry the text and the command (so the search below means something).
    for suffix in (".json", ".pftrace"):
        data = b"".join(p.read_bytes() for p in files if p.suffix == suffix)
        assert b"alice:<redacted>@db.example" in data and b"--password <redacted>" in data, suffix
    printed = (r.stdout + r.stderr).encode()
    for secret in ARGV_SECRETS + ROCTX_SECRETS + CHILD_SECRETS:
        for p in files:
            assert secret.encode() not in p.read_bytes(), (secret, p)
        assert secret.encode() not in printed, secret


def test_no_redact_keeps_roctx_text_but_never_the_command_line(tmp_path):
    r = _run(tmp_path, "--no-redact")
    assert r.returncode == 0, r.stderr
    con = open_db(tmp_path / "s_results.db")
    texts = {row[0] for row in con.execute("SELECT string FROM rocpd_string")}
    assert "fetch https://alice:url-pw-one@db.example/x" in texts
    (command,) = con.execute("SELECT command FROM rocpd_info_process").fetchone()
    for secret in ARGV_SECRETS:
        assert secret not in command
    counts = _redacted(tmp_path / "s_results.db")
    assert counts["text"] == 0 and counts["text_redaction"] == "off (--no-redact)"


def test_no_redact_is_documented_in_run_help():
    assert "--no-redact" in run_rocprof("run", "--help-all").stdout
