"""Reading and changing the alert outbox, and the ledger's alert settings.

An engine's sender (:mod:`core.engine.alerts`) asks :func:`next_try` once per
round (one indexed lookup), :func:`claim` the rows due (a compare-and-set on
``claimed_until``, ``FOR UPDATE SKIP LOCKED`` on PostgreSQL so two engines never
wait on each other), and records each outcome with :func:`delivered` or
:func:`failed`, both only while it still holds the claim. A claim left by a
killed engine runs out at ``claimed_until`` and the row is claimed again: the
only way a route is told twice, and then with the same Idempotency-Key.

The default routes (``alert_routes``) and the SMTP settings (``alert_smtp``) are
what ``schedctl alerts set`` and the window's Engine settings change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from core.enums import AlertKind
from core.ledger.access import reading, writing
from core.ledger.alert_outbox import Route, default_routes
from core.ledger.db import Ledger
from core.ledger.models import AlertOutbox, AlertRouteRow, AlertSmtp
from core.team.alert_routes import Smtp

#: Failed sends of one alert after which its route counts as failing (one Needs-attention item per route).
FAILING_AFTER = 3
#: Sends of one alert before it is given up (about a day with the backoff below).
GIVE_UP_AFTER = 30
#: The wait after the first failed send, doubled after each, at most :data:`MAX_BACKOFF`.
FIRST_BACKOFF = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)


@dataclass(frozen=True)
class Pending:
    """One alert claimed to be sent."""

    id: int
    occurrence_id: str
    schedule_id: str
    kind: str
    route: str
    data: dict[str, Any]
    attempts: int


@dataclass(frozen=True)
class FailingRoute:
    """A route that keeps failing: its alerts not delivered, and the last error."""

    route: str
    undelivered: int
    last_error: str | None


def backoff(attempts: int) -> timedelta:
    """The wait after ``attempts`` failed sends (1, 2, ...): 30 s doubling, at most an hour."""
    return min(FIRST_BACKOFF * (1 << min(max(attempts - 1, 0), 20)), MAX_BACKOFF)


def next_try(session: Session) -> datetime | None:
    """When the earliest pending alert is due (None: none is pending): one indexed lookup."""
    return session.scalar(select(func.min(AlertOutbox.next_try_at)).where(AlertOutbox.next_try_at.is_not(None)))


def pending_count(session: Session) -> int:
    """Alerts not yet delivered that will be tried again."""
    return session.scalar(select(func.count()).where(AlertOutbox.next_try_at.is_not(None))) or 0


def claim(session: Session, worker: str, now: datetime, until: datetime, limit: int = 20) -> list[Pending]:
    """Claim up to ``limit`` alerts due by ``now`` for ``worker`` until ``until``, oldest first."""
    free = (AlertOutbox.claimed_until.is_(None)) | (AlertOutbox.claimed_until < now)
    stmt = (
        select(AlertOutbox.id)
        .where(AlertOutbox.next_try_at <= now, free)
        .order_by(AlertOutbox.next_try_at, AlertOutbox.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(skip_locked=True)
    ids = list(session.scalars(stmt))
    if not ids:
        return []
    won = session.execute(
        update(AlertOutbox)
        .where(AlertOutbox.id.in_(ids), AlertOutbox.delivered_at.is_(None), free)
        .values(claimed_by=worker, claimed_until=until)
        .returning(
            AlertOutbox.id,
            AlertOutbox.occurrence_id,
            AlertOutbox.schedule_id,
            AlertOutbox.kind,
            AlertOutbox.route,
            AlertOutbox.data,
            AlertOutbox.attempts,
        )
        .execution_options(synchronize_session=False)
    ).all()
    order = {row_id: i for i, row_id in enumerate(ids)}  # oldest first, as selected
    return sorted((Pending(*row) for row in won), key=lambda p: order[p.id])


def delivered(session: Session, row_id: int, worker: str, now: datetime) -> bool:
    """Record an alert delivered, while ``worker`` still holds its claim; False when it no longer does."""
    result = session.execute(
        update(AlertOutbox)
        .where(AlertOutbox.id == row_id, AlertOutbox.claimed_by == worker, AlertOutbox.delivered_at.is_(None))
        .values(
            delivered_at=now,
            next_try_at=None,
            claimed_by=None,
            claimed_until=None,
            attempts=AlertOutbox.attempts + 1,
            last_error=None,
        )
    )
    return bool(getattr(result, "rowcount", 0))


def failed(session: Session, row: Pending, worker: str, now: datetime, error: str) -> bool:
    """Record a failed send: tried again after :func:`backoff`, or given up after :data:`GIVE_UP_AFTER`."""
    attempts = row.attempts + 1
    again = None if attempts >= GIVE_UP_AFTER else now + backoff(attempts)
    result = session.execute(
        update(AlertOutbox)
        .where(AlertOutbox.id == row.id, AlertOutbox.claimed_by == worker, AlertOutbox.delivered_at.is_(None))
        .values(next_try_at=again, claimed_by=None, claimed_until=None, attempts=attempts, last_error=error[:1000])
    )
    return bool(getattr(result, "rowcount", 0))


def failing_routes(session: Session) -> list[FailingRoute]:
    """Routes with an alert not delivered after :data:`FAILING_AFTER` sends: one each, however many alerts."""
    rows = session.execute(
        select(AlertOutbox.route, func.count(), func.max(AlertOutbox.id))
        .where(AlertOutbox.delivered_at.is_(None), AlertOutbox.attempts >= FAILING_AFTER)
        .group_by(AlertOutbox.route)
        .order_by(AlertOutbox.route)
    ).all()
    out = []
    for route, count, newest in rows:
        error = session.scalar(select(AlertOutbox.last_error).where(AlertOutbox.id == newest))
        out.append(FailingRoute(route, count, error))
    return out


def set_default_routes(session: Session, routes: Sequence[Route], now: datetime) -> None:
    """Replace the ledger's default routes with ``routes``."""
    session.execute(delete(AlertRouteRow))
    for route in routes:
        kinds = ",".join(kind.value for kind in AlertKind if kind.value in route.kinds)
        session.add(AlertRouteRow(route=route.route, kinds=kinds, created_at=now))


def list_default_routes(session: Session) -> list[Route]:
    """The ledger's default routes, in route order."""
    return default_routes(session)


def smtp_settings(session: Session) -> Smtp | None:
    """The ledger's SMTP settings, or None when none are set."""
    row = session.get(AlertSmtp, 1)
    if row is None:
        return None
    return Smtp(row.host, row.port, row.security, row.username, row.password_secret, row.sender)


def set_smtp(session: Session, smtp: Smtp | None, now: datetime) -> None:
    """Set (or with None, remove) the ledger's SMTP settings."""
    session.execute(delete(AlertSmtp))
    if smtp is not None:
        session.add(
            AlertSmtp(
                id=1,
                host=smtp.host,
                port=smtp.port,
                security=smtp.security,
                username=smtp.username,
                password_secret=smtp.password_secret,
                sender=smtp.sender,
                updated_at=now,
            )
        )


@dataclass(frozen=True)
class AlertSettings:
    """The ledger's default routes (all told of ``kinds``) and its SMTP settings, as a window edits them."""

    routes: tuple[str, ...]
    kinds: frozenset[str]
    smtp: Smtp | None


def read_alert_settings(session: Session) -> AlertSettings:
    """The default routes, the kinds the first of them hears of (all when there is none) and the SMTP settings."""
    routes = list_default_routes(session)
    kinds = routes[0].kinds if routes else frozenset(kind.value for kind in AlertKind)
    return AlertSettings(tuple(r.route for r in routes), frozenset(kinds), smtp_settings(session))


def write_alert_settings(session: Session, settings: AlertSettings, now: datetime) -> None:
    """Replace the default routes and the SMTP settings with ``settings``."""
    set_default_routes(session, [Route(r, settings.kinds) for r in settings.routes], now)
    set_smtp(session, settings.smtp, now)


def load_alert_settings(ledger: Ledger) -> AlertSettings:
    """:func:`read_alert_settings` in a read transaction of its own (a window's call, off its GUI thread)."""
    with reading(ledger) as session:
        return read_alert_settings(session)


def save_alert_settings(ledger: Ledger, settings: AlertSettings, now: datetime) -> AlertSettings:
    """:func:`write_alert_settings` in a write transaction of its own; returns what was saved."""
    with writing(ledger) as session:
        write_alert_settings(session, settings, now)
    return settings
