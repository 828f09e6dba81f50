"""Issue 12 (6): secrets are redacted by name (*_PAT, *CREDENTIAL*, *AUTH*, cloud provider
variables) and by value (URLs with a password, Bearer tokens, tokens of known formats, long
keys), in the environment and in the command line, and nothing else is touched."""

from __future__ import annotations

import json

from support import WORKLOADS, open_db, run_rocprof

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlc2lnbmF0dXJl"
SECRETS = {
    "GITHUB_PAT": "pat-value-one",
    "ADO_PAT": "pat-value-two",
    "MY_CREDENTIAL_FILE": "/secret/cred-path",
    "X_AUTH_HEADER": "auth-value",
    "AWS_ACCESS_KEY_ID": "AKIA" + "Z" * 16,
    "AZURE_CLIENT_ID": "azure-client-value",
    "GOOGLE_APPLICATION_CREDENTIALS": "/secret/gcp.json",
    "STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountKey=abc",
}


def test_secrets_redacted_by_name_and_by_value(tmp_path):
    env = dict(SECRETS)
    env.update({
        "DATABASE_URL": "postgres://alice:url-secret-pw@db.example:5432/app",
        "CURL_HEADER": "Authorization: Bearer bearer-secret-token-123",
        "SOME_SETTING": GH,
        "ID_TOKEN_IN_VALUE": JWT,
        "LONG_HEX": "ab" * 32,
        "AWS_REGION": "eu-west-1",
        "HARMLESS": "https://example.com/path?q=1",
        "GIT_COMMIT": "0123456789abcdef0123456789abcdef01234567",
    })
    r = run_rocprof("run", "-d", tmp_path, "-o", "s", WORKLOADS / "secrets_env.py",
                    "mysql://bob:argv-secret-pw@h/db", env=env)
    assert r.returncode == 0, r.stderr
    db = tmp_path / "s_results.db"
    command, raw = open_db(db).execute(
        "SELECT command, environment FROM rocpd_info_process").fetchone()
    e = json.loads(raw)
    for name in SECRETS:
        assert e[name] == "<redacted>", name
    assert e["DATABASE_URL"] == "postgres://alice:<redacted>@db.example:5432/app"
    assert e["CURL_HEADER"] == "Authorization: Bearer <redacted>"
    assert e["SOME_SETTING"] == "<redacted>"
    assert e["ID_TOKEN_IN_VALUE"] == "<redacted>"
    assert e["LONG_HEX"] == "<redacted>"
    assert e["AWS_REGION"] == "eu-west-1"
    assert e["HARMLESS"] == "https://example.com/path?q=1"
    assert e["GIT_COMMIT"] == "0123456789abcdef0123456789abcdef01234567"
    assert "mysql://bob:<redacted>@h/db" in command
    data = db.read_bytes()
    for secret in [*SECRETS.values(), "url-secret-pw", "bearer-secret-token-123", GH, JWT,
                   "argv-secret-pw", "ab" * 32]:
        assert secret.encode() not in data, secret
