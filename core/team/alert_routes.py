"""Where an alert goes: the checks on an ``alerts:`` route's ``to`` (docs/spec.md, "Alerts").

A route is ``mailto:ADDRESS`` (sent through the ledger's SMTP settings), an
``https://`` URL (a webhook; plain ``http://`` only to this machine, a loopback
address), or ``{secret: NAME}`` whose value, kept on the engine's host, is one
of those. Credentials never go in the text itself: a URL with a user or password
in it is refused, because the route is stored in the ledger.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.enums import AlertKind
from core.os_text import shown

#: The kinds a route hears of when its ``on`` is left out: every one.
DEFAULT_KINDS: tuple[AlertKind, ...] = (AlertKind.FAILED, AlertKind.UNKNOWN_EFFECT, AlertKind.MISFIRE_EXPIRED)
#: The longest route the ledger stores (its column's width).
MAX_ROUTE_CHARS = 2000
_ADDRESS = re.compile(r"[^@\s<>(),;:\"\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")
_WHAT = "write mailto:ADDRESS, an https:// URL, or {secret: NAME}"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses of this machine's loopback (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def route_problem(text: str) -> str | None:
    """Why ``text`` is not a route a person can write, or None when it is one."""
    if len(text) > MAX_ROUTE_CHARS:
        return f"is {len(text):,} characters long; a route is at most {MAX_ROUTE_CHARS:,}"
    if text != text.strip() or not text:
        return f"{shown(text)} has spaces around it or is empty; {_WHAT}"
    if any(c.isspace() or not c.isprintable() for c in text):
        return f"{shown(text)} holds a space or a control character, which no route has (a URL writes a space %20)"
    if text.lower().startswith("mailto:"):
        return _mail_problem(text[len("mailto:") :])
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme not in ("https", "http"):
        return f"{shown(text)} is not a route; {_WHAT}"
    return _url_problem(text, scheme)


def _mail_problem(address: str) -> str | None:
    if not _ADDRESS.fullmatch(address):
        return f"mailto:{shown(address)} is not one email address such as mailto:ops@example.com"
    return None


def _url_problem(text: str, scheme: str) -> str | None:
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        _ = parts.port
    except ValueError as exc:
        return f"{shown(text)} is not a URL ({exc})"
    if not host:
        return f"{shown(text)} names no host; write e.g. https://hooks.example.com/tidemark"
    if parts.username is not None or parts.password is not None:
        return (
            f"{shown(scheme + '://…@' + host)} holds a user or password, which the ledger would store; "
            "keep the whole URL as a secret and write {secret: NAME}"
        )
    if scheme == "http" and not is_loopback(host):
        return f"{shown(text)} is plain http to another machine; use https://, or http:// only to localhost"
    return None


def kinds_problem(kinds: list[AlertKind]) -> str | None:
    """Why an ``on`` list is refused: empty, or a kind named twice."""
    if not kinds:
        return f"is empty; name at least one of {', '.join(k.value for k in AlertKind)}, or leave on out for all"
    seen: set[AlertKind] = set()
    for kind in kinds:
        if kind in seen:
            return f"{kind.value} is listed twice"
        seen.add(kind)
    return None


def route_key(to: object) -> str:
    """A route's ``to`` as the ledger stores it: the text, or ``{secret: NAME}``."""
    if isinstance(to, dict):
        return f"{{secret: {to['secret']}}}"
    return str(to)


def secret_of(route: str) -> str | None:
    """The secret a stored route names (``{secret: NAME}``), else None."""
    match = re.fullmatch(r"\{secret: ([^{}]+)\}", route)
    return match.group(1) if match else None


def stored_route_problem(route: str) -> str | None:
    """Why ``route`` (as the ledger stores it, or as typed on a command line) is no route, else None."""
    name = secret_of(route)
    if name is not None:
        from core.team.secrets import name_problem

        return name_problem(name)
    return route_problem(route)


@dataclass(frozen=True)
class Smtp:
    """How ``mailto:`` routes are sent; the password is the secret ``password_secret`` names."""

    host: str
    port: int = 587
    security: str = "starttls"
    username: str | None = None
    password_secret: str | None = None
    sender: str = "tidemark@localhost"


#: How an SMTP connection is secured.
SMTP_SECURITY = ("starttls", "tls", "none")


def smtp_problems(smtp: Smtp) -> list[tuple[str, str]]:
    """(option, why) for each thing wrong with ``smtp``; empty when it can be used."""
    found = []
    if not smtp.host.strip() or any(c.isspace() or not c.isprintable() for c in smtp.host):
        found.append(("host", f"{shown(smtp.host)} is not a host name"))
    if not 1 <= smtp.port <= 65535:
        found.append(("port", f"a port is between 1 and 65535, got {smtp.port}"))
    if smtp.security not in SMTP_SECURITY:
        found.append(("security", f"{shown(smtp.security)}; choose {', '.join(SMTP_SECURITY)}"))
    elif smtp.security == "none" and not is_loopback(smtp.host):
        found.append(
            ("security", f"none (no TLS) only to this machine, not {smtp.host}: the password would travel in the clear")
        )
    if not _ADDRESS.fullmatch(smtp.sender):
        found.append(("from", f"{shown(smtp.sender)} is not an email address such as tidemark@example.com"))
    if smtp.password_secret is not None:
        from core.team.secrets import name_problem

        why = name_problem(smtp.password_secret)
        if why is not None:
            found.append(("password-secret", why))
    if smtp.password_secret is not None and smtp.username is None:
        found.append(("user", "a password needs a user to log in as"))
    return found


def route_argument(text: str) -> str:
    """A route as typed on a command line (``secret:NAME`` or ``{secret: NAME}`` for a secret) as the
    ledger stores it; ValueError saying why when it is none."""
    text = text.strip()
    match = re.fullmatch(r"\{?\s*secret\s*:\s*([^{}\s]+)\s*\}?", text)
    stored = f"{{secret: {match.group(1)}}}" if match else text
    why = stored_route_problem(stored)
    if why is not None:
        raise ValueError(why)
    return stored


def parse_routes(texts: list[str]) -> list[str]:
    """Routes as typed (:func:`route_argument`), each once; ValueError naming the first one wrong."""
    routes = []
    for text in texts:
        try:
            routes.append(route_argument(text))
        except ValueError as exc:
            raise ValueError(f"route {text!r}: {exc}") from None
    if len(set(routes)) != len(routes):
        raise ValueError("a route is given twice; give each once")
    return routes
