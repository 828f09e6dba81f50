"""``rocpd query`` formats ROCm's rocpd offers besides text (pdf, dashboard, clipboard) and mailing
the written file through a real SMTP server (aiosmtpd) on the loopback address: plain, zipped,
inline HTML, and a login over STARTTLS with a certificate made for the test."""

from __future__ import annotations

import email
import io
import os
import shutil
import socket
import subprocess
import zipfile

import pytest

SQL = "SELECT name, COUNT(*) AS calls FROM kernels GROUP BY name ORDER BY name"


@pytest.fixture
def db(tmp_path, monkeypatch, make_run):
    monkeypatch.chdir(tmp_path)
    make_run(tmp_path / "a.db", seed=1)
    return "a.db"


def _pages(path) -> int:
    import re

    return len(re.findall(rb"/Type /Page(?!s)", open(path, "rb").read()))


def test_pdf_pages_hold_the_rows(cli, db):
    rc, out, err = cli("query", "-i", db, "--query", SQL, "--format", "pdf")
    assert rc == 0, err
    assert open("rocpd-output-data/out.pdf", "rb").read().startswith(b"%PDF")
    assert _pages("rocpd-output-data/out.pdf") == 1 and "out.pdf" in out
    many = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)"
            " SELECT i FROM n")
    assert cli("query", "-i", db, "--query", many, "--format", "pdf", "-o", "many")[0] == 0
    assert _pages("rocpd-output-data/many.pdf") == 4  # 202 lines, 58 a page


def test_dashboard_is_our_report_page(cli, db):
    rc, _, err = cli("query", "-i", db, "--query", SQL, "--format", "dashboard", "-o", "dash")
    assert rc == 0, err
    page = open("rocpd-output-data/dash.html").read()
    from rocpd.report import _CSS

    assert _CSS.strip()[:40] in page and "<td>gemm_fp16</td>" in page and "GROUP BY name" in page


def test_dashboard_with_a_jinja2_template(cli, db, tmp_path):
    (tmp_path / "t.html").write_text("<h1>{{ title }}</h1>{{ table_html | safe }}<i>{{ query }}</i>")
    rc, _, err = cli("query", "-i", db, "--query", SQL, "--format", "dashboard", "-o", "t",
                     "--template-path", str(tmp_path / "t.html"))
    assert rc == 0, err
    page = open("rocpd-output-data/t.html").read()
    assert page.startswith("<h1>rocpd query</h1><table") and "<td>relu</td>" in page
    assert "<i>SELECT name" in page


def test_clipboard_through_the_tool_on_path(cli, db, tmp_path, monkeypatch):
    """A stand-in for xclip (no display here): a script that keeps what it is given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "xclip"
    tool.write_text(f"#!/bin/sh\nexec {shutil.which('cat')} > {tmp_path / 'clip.txt'}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    rc, out, _ = cli("query", "-i", db, "--query", SQL, "--format", "clipboard")
    assert rc == 0 and "copied 4 rows to the clipboard (xclip)" in out
    assert "gemm_fp16" in (tmp_path / "clip.txt").read_text()


def test_clipboard_without_a_tool_is_one_line(cli, db, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    rc, _, err = cli("query", "-i", db, "--query", SQL, "--format", "clipboard")
    assert rc == 1 and err.count("\n") == 1 and "no clipboard tool found" in err


# -- mail ------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's hook name
        self.messages.append((envelope.rcpt_tos, email.message_from_bytes(envelope.content)))
        return "250 OK"


@pytest.fixture
def smtp():
    pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (the test extra)")
    from aiosmtpd.controller import Controller

    inbox = _Inbox()
    ctl = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    ctl.start()
    try:
        yield inbox, ctl.port
    finally:
        ctl.stop()


def _attachments(msg):
    return {p.get_filename(): p.get_payload(decode=True) for p in msg.walk() if p.get_filename()}


def test_mail_the_csv(cli, db, smtp):
    inbox, port = smtp
    rc, out, err = cli("query", "-i", db, "--query", SQL, "--format", "csv", "--email-to",
                       "a@example.org, b@example.org", "--email-from", "me@example.org",
                       "--email-subject", "kernels", "--smtp-server", "127.0.0.1", "--smtp-port", port)
    assert rc == 0, err
    (to, msg), = inbox.messages
    assert to == ["a@example.org", "b@example.org"] and msg["Subject"] == "kernels"
    assert _attachments(msg)["out.csv"] == open("rocpd-output-data/out.csv", "rb").read()
    assert "mailed" in out and "out.csv to a@example.org, b@example.org" in out


def test_mail_zipped_with_inline_preview(cli, db, smtp):
    inbox, port = smtp
    rc, _, err = cli("query", "-i", db, "--query", SQL, "--format", "dashboard", "--email-to",
                     "a@example.org", "--email-from", "me@example.org", "--smtp-server", "127.0.0.1",
                     "--smtp-port", port, "--zip-attachments", "--inline-preview")
    assert rc == 0, err
    (_, msg), = inbox.messages
    html_parts = [p for p in msg.walk() if p.get_content_type() == "text/html"]
    assert html_parts and "<td>softmax</td>" in html_parts[0].get_payload(decode=True).decode()
    files = _attachments(msg)
    assert list(files) == ["out.html.zip"]
    with zipfile.ZipFile(io.BytesIO(files["out.html.zip"])) as zf:
        assert zf.namelist() == ["out.html"]
    assert not [f for f in os.listdir(".") if f.endswith(".zip")]  # no ZIP left behind


def test_mail_needs_a_file_and_a_sender(cli, db, smtp):
    inbox, port = smtp
    # As ROCm's query: no --format prints the table, mails nothing, says so and succeeds.
    rc, out, err = cli("query", "-i", db, "--query", SQL, "--email-to", "a@example.org",
                       "--email-from", "me@example.org", "--smtp-port", port)
    assert rc == 0, err
    assert "calls" in out and "No file was exported; skipping email." in out
    assert not inbox.messages
    rc, _, err = cli("query", "-i", db, "--query", SQL, "-f", "csv", "--email-to", "a@example.org",
                     "--smtp-server", "127.0.0.1", "--smtp-port", port)
    assert rc == 1 and "--email-from" in err


def test_mail_error_names_the_server(cli, db):
    port = _free_port()  # nothing listens there
    rc, _, err = cli("query", "-i", db, "--query", SQL, "-f", "csv", "--email-to", "a@example.org",
                     "--email-from", "me@example.org", "--smtp-server", "127.0.0.1",
                     "--smtp-port", port)
    assert rc == 1 and f"SMTP server 127.0.0.1:{port}" in err and err.count("\n") == 1


@pytest.fixture
def tls_smtp(tmp_path, monkeypatch):
    """STARTTLS and AUTH (only over TLS) with a self-signed certificate for 127.0.0.1 that the
    client is told to trust through $SSL_CERT_FILE."""
    pytest.importorskip("aiosmtpd", reason="the mail tests need aiosmtpd (the test extra)")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the test certificate")
    import ssl

    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    logins = []

    def check(server, session, envelope, mechanism, auth_data):
        logins.append((auth_data.login, auth_data.password))
        return AuthResult(success=auth_data.password == b"s3cret-pw", handled=False)

    inbox = _Inbox()
    ctl = Controller(inbox, hostname="127.0.0.1", port=_free_port(), tls_context=ctx,
                     require_starttls=True, authenticator=check, auth_require_tls=True,
                     auth_exclude_mechanism=["LOGIN"])
    ctl.start()
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    try:
        yield inbox, ctl.port, logins
    finally:
        ctl.stop()


def test_login_over_starttls_with_the_password_from_the_environment(cli, db, tls_smtp,
                                                                      monkeypatch):
    inbox, port, logins = tls_smtp
    monkeypatch.setenv("ROCPD_SMTP_PASSWORD", "s3cret-pw")
    rc, out, err = cli("query", "-i", db, "--query", SQL, "-f", "json", "--email-to",
                       "a@example.org", "--email-from", "me@example.org", "--smtp-server",
                       "127.0.0.1", "--smtp-port", port, "--smtp-user", "me")
    assert rc == 0, err
    assert logins == [(b"me", b"s3cret-pw")] and len(inbox.messages) == 1
    assert "s3cret" not in out + err


def test_a_refused_login_never_shows_the_password(cli, db, tls_smtp):
    inbox, port, _ = tls_smtp
    rc, out, err = cli("query", "-i", db, "--query", SQL, "-f", "json", "--email-to",
                       "a@example.org", "--email-from", "me@example.org", "--smtp-server",
                       "127.0.0.1", "--smtp-port", port, "--smtp-user", "me",
                       "--smtp-password", "wrong-pw")
    assert rc == 1 and "refused the login of me" in err and not inbox.messages
    assert "wrong-pw" not in out + err
