"""The alert outbox (both databases): an occurrence entering FAILED, UNKNOWN_EFFECT or
MISFIRE_EXPIRED writes one row per route that hears of it, in the same transaction,
once; the schedule's own routes, else the ledger's defaults."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger import alert_outbox, events
from core.ledger.alert_outbox import expired_range_id
from core.ledger.db import Ledger
from core.ledger.models import AlertOutbox, AlertRouteRow, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.spec.validation import parse_spec

from . import FAILING_MINUTELY, spec_data, utc

SID = "alerting"
HOOK = "https://hooks.example.com/tm"
MAIL = "mailto:ops@example.com"


def _spec(**keys: Any) -> dict[str, Any]:
    return spec_data(FAILING_MINUTELY, **keys)


def _publish(ledger: Ledger, spec: dict[str, Any], at: datetime) -> None:
    with ledger.write() as session:
        publish(session, parse_spec(spec), FixedClock(at))


def _outbox(ledger: Ledger) -> list[tuple[str, str, str]]:
    with ledger.read() as session:
        rows = session.execute(
            select(AlertOutbox.occurrence_id, AlertOutbox.kind, AlertOutbox.route).order_by(AlertOutbox.id)
        ).all()
    return [tuple(r) for r in rows]


def _fail_one_minute(ledger: Ledger, spec: dict[str, Any]) -> Engine:
    """Publish at 12:00:30 and run the 12:01 occurrence, which fails for good."""
    _publish(ledger, spec, utc("2026-03-01T12:00:30Z"))
    clock = FixedClock(utc("2026-03-01T12:01:01Z"))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1, deliver_alerts=False))
    engine.run_once()
    return engine


def test_a_failure_writes_one_alert_per_route_that_hears_of_it_and_only_once(ledger: Ledger) -> None:
    alerts = [{"to": HOOK}, {"to": MAIL, "on": ["UNKNOWN_EFFECT"]}, {"to": {"secret": "TEAM_HOOK"}, "on": ["FAILED"]}]
    engine = _fail_one_minute(ledger, _spec(alerts=alerts))
    with ledger.read() as session:
        failed = session.scalars(select(Occurrence.occurrence_id).where(Occurrence.state == S.FAILED)).all()
        [row] = session.scalars(select(AlertOutbox).where(AlertOutbox.route == HOOK)).all()
    assert len(failed) == 1
    assert _outbox(ledger) == [(failed[0], "FAILED", HOOK), (failed[0], "FAILED", "{secret: TEAM_HOOK}")]
    assert row.data["state"] == "FAILED" and row.data["attempt"] == 1
    assert row.data["scheduledUtc"] == "2026-03-01T12:01:00Z" and row.data["nominalLocal"] == "2026-03-01T12:01:00"
    assert (row.attempts, row.delivered_at, row.next_try_at) == (0, None, utc("2026-03-01T12:01:01Z"))
    engine.run_once()  # nothing new fails: nothing new is written
    assert len(_outbox(ledger)) == 2


@pytest.mark.parametrize(
    ("alerts", "defaults", "routes"),
    [
        pytest.param(None, [(HOOK, "FAILED")], [HOOK], id="no_alerts_uses_the_defaults"),
        pytest.param(None, [(HOOK, "MISFIRE_EXPIRED")], [], id="defaults_that_do_not_hear_of_it"),
        pytest.param([], [(HOOK, "FAILED")], [], id="empty_alerts_opts_out"),
        pytest.param(None, [], [], id="no_routes_at_all"),
        pytest.param([{"to": MAIL}], [(HOOK, "FAILED")], [MAIL], id="own_routes_replace_the_defaults"),
    ],
)
def test_which_routes_hear_of_a_failure(
    ledger: Ledger, alerts: list[Any] | None, defaults: list[tuple[str, str]], routes: list[str]
) -> None:
    with ledger.write() as session:
        for route, kinds in defaults:
            session.add(AlertRouteRow(route=route, kinds=kinds, created_at=utc("2026-03-01T11:00:00Z")))
    spec = _spec(alerts=alerts) if alerts is not None else _spec()
    _fail_one_minute(ledger, spec)
    assert [route for _, _, route in _outbox(ledger)] == routes


def test_an_unknown_effect_is_told_in_the_transaction_that_records_it(ledger: Ledger) -> None:
    _publish(ledger, _spec(alerts=[{"to": HOOK, "on": ["UNKNOWN_EFFECT"]}]), utc("2026-03-01T12:00:00Z"))
    Engine(
        ledger, FixedClock(utc("2026-03-01T12:00:30Z")), EngineOptions(max_workers=1, deliver_alerts=False)
    ).run_once()
    at = utc("2026-03-01T12:03:00Z")
    with ledger.write() as session:
        occ = session.scalars(select(Occurrence).where(Occurrence.state == S.PLANNED).limit(1)).one()
        occ.state = S.RUNNING  # as a claim would have left it
        session.flush()
        events.transition(session, occ, S.UNKNOWN_EFFECT, at, "the attempt was lost")
        occ_id = occ.occurrence_id
        with ledger.read() as other:
            assert other.scalars(select(AlertOutbox)).all() == []  # not before the commit
    assert _outbox(ledger) == [(occ_id, "UNKNOWN_EFFECT", HOOK)]


def test_a_rolled_back_change_leaves_no_alert(ledger: Ledger) -> None:
    _publish(ledger, _spec(alerts=[{"to": HOOK, "on": ["UNKNOWN_EFFECT"]}]), utc("2026-03-01T12:00:00Z"))
    Engine(
        ledger, FixedClock(utc("2026-03-01T12:00:30Z")), EngineOptions(max_workers=1, deliver_alerts=False)
    ).run_once()
    with pytest.raises(RuntimeError), ledger.write() as session:
        occ = session.scalars(select(Occurrence).where(Occurrence.state == S.PLANNED).limit(1)).one()
        occ.state = S.RUNNING
        session.flush()
        events.transition(session, occ, S.UNKNOWN_EFFECT, utc("2026-03-01T12:03:00Z"), "lost")
        raise RuntimeError("the change fails after its event")
    assert _outbox(ledger) == []


def test_each_missed_run_is_told(ledger: Ledger) -> None:
    # 12:00 to 12:03 missed under SKIP (12:03 is 30 s late): four MISFIRE_EXPIRED rows, four alerts
    spec = _spec(misfirePolicy="SKIP", alerts=[{"to": HOOK, "on": ["MISFIRE_EXPIRED"]}])
    _publish(ledger, spec, utc("2026-03-01T12:00:00Z"))
    Engine(
        ledger, FixedClock(utc("2026-03-01T12:03:30Z")), EngineOptions(max_workers=1, deliver_alerts=False)
    ).run_once()
    told = _outbox(ledger)
    with ledger.read() as session:
        expired = session.scalars(select(Occurrence.occurrence_id).where(Occurrence.state == S.MISFIRE_EXPIRED)).all()
    assert sorted(occ for occ, _, _ in told) == sorted(expired) and len(expired) == 4
    assert {kind for _, kind, _ in told} == {"MISFIRE_EXPIRED"}


def test_a_long_outage_is_one_alert_for_its_range(ledger: Ledger) -> None:
    spec = _spec(misfirePolicy="SKIP", horizon="PT2H", alerts=[{"to": HOOK}])
    _publish(ledger, spec, utc("2026-02-26T12:00:00Z"))
    Engine(
        ledger, FixedClock(utc("2026-03-01T12:00:30Z")), EngineOptions(max_workers=1, deliver_alerts=False)
    ).run_once()
    with ledger.read() as session:
        rows = session.scalars(select(AlertOutbox)).all()
    ranges = [r for r in rows if r.occurrence_id.startswith("exp-")]
    assert len(ranges) == 1
    [r] = ranges
    assert r.occurrence_id == expired_range_id(SID, 1, utc(r.data["fromUtc"]), utc(r.data["toUtc"]))
    assert r.data["occurrences"] > 4000 and r.kind == "MISFIRE_EXPIRED"
    assert len(rows) < 5  # not one per missed minute
    assert timedelta(0) < utc(r.data["toUtc"]) - utc(r.data["fromUtc"])


def test_changes_with_nothing_to_tell_cost_no_statement(ledger: Ledger) -> None:
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    told = [
        events.OccurrenceTransitioned(
            at=utc("2026-03-01T12:00:00Z"),
            schedule_id=SID,
            occurrence_id="occ-x",
            from_=S.RUNNING,
            to=state,
            reason=None,
        )
        for state in (S.SUCCEEDED, S.RETRY_WAIT, S.DUE)
    ]
    with ledger.write() as session:
        event.listen(ledger.engine, "before_cursor_execute", count)
        try:
            assert alert_outbox.enqueue(session, told) == 0
        finally:
            event.remove(ledger.engine, "before_cursor_execute", count)
    assert sent == []


def test_a_batch_of_expired_ranges_reads_no_occurrence(ledger: Ledger) -> None:
    spec = _spec(misfirePolicy="SKIP", horizon="PT2H", alerts=[{"to": HOOK}])
    _publish(ledger, spec, utc("2026-02-26T12:00:00Z"))
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    expired = events.OccurrencesExpired(
        at=utc("2026-03-01T12:00:00Z"),
        schedule_id=SID,
        revision=1,
        state=S.MISFIRE_EXPIRED,
        policy="SKIP",
        reason="outage",
        from_utc=utc("2026-02-26T12:00:00Z"),
        to_utc=utc("2026-03-01T11:00:00Z"),
        occurrences=4260,
    )
    with ledger.write() as session:
        event.listen(ledger.engine, "before_cursor_execute", count)
        try:
            assert alert_outbox.enqueue(session, [expired]) == 1
        finally:
            event.remove(ledger.engine, "before_cursor_execute", count)
    assert not any("FROM occurrence" in s for s in sent), sent
    assert len(sent) == 2  # the revision's routes, then the row
