"""Sending one alert to one route: a webhook by HTTP POST, or a mail through SMTP.

Every network call has a timeout. A route kept as a secret (``{secret: NAME}``)
is read on this host when it is sent, and neither its value nor anything that
holds it (an error that names the URL) leaves this module: errors are told with
the secret's value masked. A redirect is not followed (a POST would go on as a
GET elsewhere): it is a failure that says where the route points.

:func:`send` answers with a :class:`Sent`: whether the route took it, and what
came back in words ("HTTP 200 OK", "250 queued", "timed out after 10 s").
"""

from __future__ import annotations

import json
import smtplib
import socket
import ssl
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import make_msgid
from typing import Any

from core.desktop.notify.alert_message import idempotency_key, mail_body, mail_subject, webhook_body
from core.errors import first_line
from core.team.alert_routes import Smtp, is_loopback, route_problem, secret_of
from core.team.secrets import MASK, SecretError, lookup
from core.time.formats import fmt_utc
from core.version import tidemark_version

#: Seconds each network call may take (connect, send, read) unless told otherwise.
TIMEOUT = 10.0


@dataclass(frozen=True)
class Sent:
    """What sending one alert came to."""

    ok: bool
    said: str


@dataclass(frozen=True)
class Alert:
    """One alert to send: what it says, the kind, and the route as the ledger stores it."""

    occurrence_id: str
    kind: str
    route: str
    data: dict[str, Any]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def send(alert: Alert, smtp: Smtp | None, *, timeout: float = TIMEOUT) -> Sent:
    """Send ``alert`` to its route; never raises for the route's or the network's trouble."""
    target, masks = _target(alert.route)
    if isinstance(target, Sent):
        return target
    try:
        if target.lower().startswith("mailto:"):
            return _mail(alert, target[len("mailto:") :], smtp, timeout, masks)
        return _post(alert, target, timeout)
    except Exception as exc:  # the route's trouble, told masked
        return Sent(False, _masked(_words(exc, timeout), masks))


def send_test(
    route: str, smtp: Smtp | None, now: datetime, *, schedule_id: str, reason: str, timeout: float = TIMEOUT
) -> Sent:
    """One test alert (kind ``TEST``, a fresh id) to ``route`` as the ledger stores it: what
    ``schedctl alerts test`` and the designer's "Send a test alert" send."""
    data = {"scheduleId": schedule_id, "state": "TEST", "reason": reason, "at": fmt_utc(now)}
    return send(Alert(f"test-{uuid.uuid4().hex[:16]}", "TEST", route, data), smtp, timeout=timeout)


def _target(route: str) -> tuple[str | Sent, tuple[str, ...]]:
    """The route to send to (a secret's value read now) and what to mask, or why there is none."""
    name = secret_of(route)
    if name is None:
        return route, ()
    try:
        value = lookup(name)
    except SecretError as exc:
        return Sent(False, first_line(exc)), ()
    if route_problem(value) is not None:
        return Sent(False, f"the secret {name} does not hold a route (mailto:, https://, or http:// to localhost)"), ()
    return value, (value,)


def _post(alert: Alert, url: str, timeout: float) -> Sent:
    body = json.dumps(webhook_body(alert.data, alert.kind)).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Idempotency-Key": idempotency_key(alert.occurrence_id, alert.kind),
            "User-Agent": f"Tidemark/{tidemark_version()}",
        },
    )
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read(4096)
            return Sent(200 <= response.status < 300, f"HTTP {response.status} {response.reason}")
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            return Sent(False, f"HTTP {exc.code}: the route redirects; give the address it redirects to")
        return Sent(False, f"HTTP {exc.code} {exc.reason}")


def _mail(alert: Alert, address: str, smtp: Smtp | None, timeout: float, masks: tuple[str, ...]) -> Sent:
    if smtp is None:
        return Sent(False, "no SMTP server is set for mailto: routes; set one with schedctl alerts set --smtp-host")
    password = None
    if smtp.password_secret is not None:
        try:
            password = lookup(smtp.password_secret)
        except SecretError as exc:
            return Sent(False, first_line(exc))
    message = EmailMessage()
    message["From"] = smtp.sender
    message["To"] = address
    message["Subject"] = mail_subject(alert.data)
    # One alert, one Message-ID: a repeat after a crash is the same message to mail clients.
    message["Message-ID"] = make_msgid(idempotency_key(alert.occurrence_id, alert.kind).replace(":", "."), "tidemark")
    message["Idempotency-Key"] = idempotency_key(alert.occurrence_id, alert.kind)
    message.set_content(mail_body(alert.data, alert.kind))
    client = _smtp_client(smtp, timeout)
    with client:
        if smtp.security == "starttls":
            client.starttls(context=ssl.create_default_context())
        if smtp.username is not None:
            client.login(smtp.username, password or "")
        refused = client.send_message(message)
        code, reply = client.noop()
    if refused:
        return Sent(False, _masked(f"the server refused {', '.join(refused)}", masks))
    return Sent(True, f"SMTP {code} {reply.decode(errors='replace')} (accepted for {address})")


def _smtp_client(smtp: Smtp, timeout: float) -> smtplib.SMTP:
    if smtp.security == "tls":
        return smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=timeout, context=ssl.create_default_context())
    if smtp.security == "none" and not is_loopback(smtp.host):
        raise ValueError(f"SMTP without TLS only to this machine, not {smtp.host}")
    return smtplib.SMTP(smtp.host, smtp.port, timeout=timeout)


def _words(exc: BaseException, timeout: float) -> str:
    """A network failure in one line."""
    if isinstance(exc, TimeoutError | socket.timeout) or "timed out" in str(exc):
        return f"timed out after {timeout:g} s"
    if isinstance(exc, urllib.error.URLError):
        return f"could not connect: {first_line(exc.reason) if isinstance(exc.reason, BaseException) else exc.reason}"
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return f"the SMTP server refused the login: {exc.smtp_code}"
    if isinstance(exc, smtplib.SMTPResponseException):
        said = exc.smtp_error
        return f"SMTP {exc.smtp_code} {said.decode(errors='replace') if isinstance(said, bytes) else said}"
    return f"{type(exc).__name__}: {first_line(exc)}"


def _masked(text: str, masks: tuple[str, ...]) -> str:
    for value in masks:
        if value:
            text = text.replace(value, MASK)
    return text
