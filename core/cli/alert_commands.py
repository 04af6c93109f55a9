"""``schedctl alerts``: the ledger's default alert routes and SMTP settings, what waits in the
outbox, and one test message to a route (docs/cli.md, "Alerts")."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.cli.common import EXIT_INTERNAL, EXIT_OK, UsageError
from core.cli.ledger_access import command_clock, open_command_ledger
from core.cli.output import out

if TYPE_CHECKING:
    import argparse

    from core.team.alert_routes import Smtp


def _kinds(text: str | None) -> frozenset[str]:
    """``--on FAILED,unknown_effect`` as kinds (all three when not given)."""
    from core.enums import AlertKind

    if text is None:
        return frozenset(kind.value for kind in AlertKind)
    names = [part.strip().upper() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in AlertKind.__members__]
    if unknown or not names:
        what = f"unknown state {', '.join(repr(n) for n in unknown)}" if unknown else "no state given"
        raise UsageError(f"--on: {what}; alerts are told of {', '.join(k.value for k in AlertKind)}")
    return frozenset(names)


def _routes(texts: list[str]) -> list[str]:
    from core.team.alert_routes import parse_routes

    try:
        return parse_routes(texts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _smtp(args: argparse.Namespace, before: Smtp | None) -> Smtp | None:
    """The SMTP settings the options make of ``before``; ``before`` when none is given."""
    from dataclasses import replace

    from core.team.alert_routes import Smtp, smtp_problems

    given = {
        "host": args.smtp_host,
        "port": args.smtp_port,
        "security": args.smtp_security,
        "username": args.smtp_user,
        "password_secret": args.smtp_password_secret,
        "sender": args.smtp_from,
    }
    changed = {key: value for key, value in given.items() if value is not None}
    if not changed:
        return before
    if before is None:
        if "host" not in changed:
            raise UsageError("--smtp-host is needed first: no SMTP server is set on this ledger")
        before = Smtp(changed["host"])
    smtp = replace(before, **changed)
    problems = smtp_problems(smtp)
    if problems:
        raise UsageError("; ".join(f"--smtp-{key}: {why}" for key, why in problems))
    return smtp


def cmd_alerts_set(args: argparse.Namespace) -> int:
    """Set the ledger's default routes (replacing them) and its SMTP settings."""
    from core.ledger import alert_queries
    from core.ledger.alert_outbox import Route

    routes = _routes(args.routes)
    kinds = _kinds(args.on)
    if args.on is not None and not routes:
        raise UsageError("--on goes with the routes it is for; give them too")
    if args.clear and routes:
        raise UsageError("--clear removes every default route; give routes or --clear, not both")
    clock = command_clock(args)
    with open_command_ledger(args, clock) as ledger, ledger.write() as session:
        smtp = _smtp(args, alert_queries.smtp_settings(session))
        if smtp is not None:
            alert_queries.set_smtp(session, smtp, clock.now())
        if routes or args.clear:
            alert_queries.set_default_routes(session, [Route(r, kinds) for r in routes], clock.now())
        now_routes = alert_queries.list_default_routes(session)
    if routes or args.clear:
        out(f"default routes: {len(now_routes)}" + "".join(f"\n  {_route_line(r)}" for r in now_routes))
    if smtp is not None and any(
        v is not None
        for v in (
            args.smtp_host,
            args.smtp_port,
            args.smtp_security,
            args.smtp_user,
            args.smtp_password_secret,
            args.smtp_from,
        )
    ):
        out(f"SMTP: {_smtp_line(smtp)}")
    if not (routes or args.clear or smtp is not None):
        raise UsageError("nothing to set: give routes, --clear, or --smtp-… options")
    return EXIT_OK


def _route_line(route: Any) -> str:
    from core.enums import AlertKind

    return f"{route.route}  on {','.join(k.value for k in AlertKind if k.value in route.kinds)}"


def _smtp_line(smtp: Smtp) -> str:
    login = f", user {smtp.username}" if smtp.username else ""
    secret = f", password from secret {smtp.password_secret}" if smtp.password_secret else ""
    return f"{smtp.host}:{smtp.port} ({smtp.security}{login}{secret}), from {smtp.sender}"


def cmd_alerts_list(args: argparse.Namespace) -> int:
    """The default routes, the SMTP settings, and the routes whose alerts are not getting through."""
    from core.ledger import alert_queries

    with open_command_ledger(args, command_clock(args), create=False) as ledger, ledger.read() as session:
        routes = alert_queries.list_default_routes(session)
        smtp = alert_queries.smtp_settings(session)
        failing = alert_queries.failing_routes(session)
        pending = alert_queries.pending_count(session)
    if args.format == "json":
        out(json.dumps(_listing(routes, smtp, failing, pending), indent=2))
        return EXIT_OK
    if routes:
        out("default routes (for schedules whose spec has no alerts):")
    else:
        out("no default routes (schedctl alerts set ROUTE)")
    for route in routes:
        out(f"  {_route_line(route)}")
    out(f"SMTP: {_smtp_line(smtp)}" if smtp is not None else "SMTP: not set (mailto: routes wait)")
    out(f"alerts waiting to be sent: {pending}")
    for f in failing:
        out(f"not getting through: {f.route} ({f.undelivered} waiting): {f.last_error or 'no error recorded'}")
    return EXIT_OK


def _listing(routes: list[Any], smtp: Smtp | None, failing: list[Any], pending: int) -> dict[str, Any]:
    from core.enums import AlertKind

    mail = None
    if smtp is not None:
        mail = {
            "host": smtp.host,
            "port": smtp.port,
            "security": smtp.security,
            "user": smtp.username,
            "passwordSecret": smtp.password_secret,
            "from": smtp.sender,
        }
    return {
        "routes": [{"to": r.route, "on": [k.value for k in AlertKind if k.value in r.kinds]} for r in routes],
        "smtp": mail,
        "pending": pending,
        "failing": [{"route": f.route, "undelivered": f.undelivered, "lastError": f.last_error} for f in failing],
    }


def cmd_alerts_test(args: argparse.Namespace) -> int:
    """Send one test alert to ROUTE now and say what came back: exit 0 when it was taken, else 1."""
    from core.desktop.notify.alert_send import send_test
    from core.ledger import alert_queries

    [route] = _routes([args.route])
    clock = command_clock(args)
    smtp = None
    if route.startswith("mailto:"):
        with open_command_ledger(args, clock, create=False) as ledger, ledger.read() as session:
            smtp = alert_queries.smtp_settings(session)
    sent = send_test(
        route, smtp, clock.now(), schedule_id="tidemark", reason="schedctl alerts test", timeout=args.timeout
    )
    out(f"{'delivered' if sent.ok else 'not delivered'} to {route}: {sent.said}")
    return EXIT_OK if sent.ok else EXIT_INTERNAL
