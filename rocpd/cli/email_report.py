"""Mail ``rocpd query``'s output file, as ROCm's ``--email-to`` does.

One message from ``sender`` to every address of ``to``; the file attached (or, ``zip_files``, one
ZIP holding it); with ``inline_preview`` an HTML file is also the message's HTML body. Sent
through the SMTP server at ``host:port``: port 465 speaks TLS from the start, any other port
upgrades with STARTTLS when the server offers it. With a user name the password is sent only
over TLS (never in clear, unlike ROCm's, which also accepts any certificate: ours are verified,
against $SSL_CERT_FILE where set). The password comes from ``password`` or
$ROCPD_SMTP_PASSWORD (which keeps it out of the process list); it is never printed or stored.
"""

from __future__ import annotations

import os
import smtplib
import ssl
import tempfile
import zipfile
from email.message import EmailMessage

from ..errors import RocpdError

PASSWORD_ENV = "ROCPD_SMTP_PASSWORD"
BODY = "The rocpd query result is attached."


def recipients(text: str) -> list[str]:
    out = [a.strip() for a in (text or "").split(",") if a.strip()]
    if not out:
        raise RocpdError("--email-to: no address given")
    return out


def message(path: str, to: list[str], sender: str, subject: str, inline_preview: bool = False,
            zip_files: bool = False, workdir: str | None = None) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = ", ".join(to)
    msg.set_content(BODY)
    if inline_preview and path.lower().endswith((".html", ".htm")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            msg.add_alternative(fh.read(), subtype="html")
    attach = path
    if zip_files:
        attach = os.path.join(workdir or tempfile.gettempdir(), os.path.basename(path) + ".zip")
        with zipfile.ZipFile(attach, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.write(path, arcname=os.path.basename(path))
    with open(attach, "rb") as fh:
        msg.add_attachment(fh.read(), maintype="application", subtype="octet-stream",
                           filename=os.path.basename(attach))
    return msg


def send(path: str, to: list[str], sender: str, subject: str, host: str = "localhost",
         port: int = 25, user: str | None = None, password: str | None = None,
         inline_preview: bool = False, zip_files: bool = False, timeout: float = 30) -> None:
    if not sender:
        raise RocpdError("--email-to needs --email-from (the sender's address)")
    password = password if password is not None else os.environ.get(PASSWORD_ENV)
    if user and not password:
        raise RocpdError(f"--smtp-user {user} needs a password: --smtp-password or ${PASSWORD_ENV}")
    where = f"SMTP server {host}:{port}"
    with tempfile.TemporaryDirectory(prefix="rocpd-mail-") as tmp:
        msg = message(path, to, sender, subject, inline_preview, zip_files, tmp)
        try:
            context = ssl.create_default_context()
            if port == 465:
                server = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
            else:
                server = smtplib.SMTP(host, port, timeout=timeout)
            with server:
                server.ehlo()
                if port != 465 and server.has_extn("starttls"):
                    server.starttls(context=context)
                    server.ehlo()
                if user:
                    if port != 465 and not isinstance(server.sock, ssl.SSLSocket):
                        raise RocpdError(f"{where} offers no STARTTLS: the password for {user} is"
                                         " not sent in clear; use a server (or port 465) with TLS")
                    server.login(user, password)
                server.send_message(msg)
        except smtplib.SMTPAuthenticationError:
            raise RocpdError(f"{where} refused the login of {user}; check --smtp-user and the"
                             " password") from None
        except (smtplib.SMTPException, ssl.SSLError, OSError) as e:
            raise RocpdError(f"mail to {', '.join(to)} not sent: {where}: {e}") from None
