"""Alerts delivered by the engine to real servers on 127.0.0.1 (both databases): once when the
route takes it; tried again after a backoff when it fails, hangs or its secret is missing; one
Needs-attention item for a route that keeps failing; and engines sharing one outbox."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, select

from core.clock import FixedClock
from core.desktop.notify.alert_send import Alert, Sent, send
from core.desktop.notify.needs import NeedKind, notice_text
from core.engine.alerts import AlertSender
from core.engine.engine import Engine, EngineOptions
from core.ledger import alert_queries
from core.ledger.db import Ledger
from core.ledger.models import AlertOutbox, Event, Occurrence
from core.ledger.monitor_reads import person_needs
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.spec.validation import parse_spec
from core.team import secrets
from core.team.alert_routes import Smtp
from tests.alert_servers import HookServer, MailBox, hook_server, smtp_server
from tests.secret_stores import secret_store

from . import FAILING_MINUTELY, spec_data, utc

SID = "alerting"
START = utc("2026-03-01T12:00:30Z")


def _spec(alerts: list[Any], **keys: Any) -> dict[str, Any]:
    return spec_data(FAILING_MINUTELY, alerts=alerts, **keys)


@pytest.fixture
def hook() -> Iterator[HookServer]:
    with hook_server() as server:
        yield server


@pytest.fixture
def keep_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with secret_store("keyring", tmp_path / "config", monkeypatch):
        yield


def _engine(ledger: Ledger, alerts: list[Any], at: str = "2026-03-01T12:01:01Z", **options: Any) -> Engine:
    """Publish at 12:00:30; an engine whose first pass (at 12:01:01) fails the 12:01 run for good."""
    with ledger.write() as session:
        publish(session, parse_spec(_spec(alerts)), FixedClock(START))
    return Engine(ledger, FixedClock(utc(at)), EngineOptions(max_workers=1, alert_timeout=0.5, **options))


def _rows(ledger: Ledger) -> list[AlertOutbox]:
    with ledger.read() as session:
        return list(session.scalars(select(AlertOutbox).order_by(AlertOutbox.id)))


def _failed_id(ledger: Ledger) -> str:
    with ledger.read() as session:
        return session.scalars(select(Occurrence.occurrence_id).where(Occurrence.state == S.FAILED)).one()


def test_a_failure_is_delivered_once_with_its_key_and_body(ledger: Ledger, hook: HookServer) -> None:
    engine = _engine(ledger, [{"to": hook.url}])
    engine.run_once()
    occ = _failed_id(ledger)
    [got] = hook.received
    assert got.key == f"{occ}:FAILED"
    assert got.body["occurrenceId"] == occ and got.body["scheduleId"] == SID
    assert (got.body["state"], got.body["attempt"], got.body["scheduledUtc"]) == ("FAILED", 1, "2026-03-01T12:01:00Z")
    assert got.body["text"] == f"Tidemark: {SID} failed (2026-03-01T12:01:00, attempt 1): {got.body['reason']}"
    [row] = _rows(ledger)
    assert (row.delivered_at, row.next_try_at, row.attempts, row.claimed_by) == (
        utc("2026-03-01T12:01:01Z"),
        None,
        1,
        None,
    )
    engine.run_once()  # delivered: never sent again
    assert len(hook.received) == 1


@pytest.mark.parametrize(
    ("status", "hang", "said"),
    [
        pytest.param(500, False, "HTTP 500 Internal Server Error", id="server_fails"),
        pytest.param(200, True, "timed out after 0.5 s", id="server_hangs"),
    ],
)
def test_a_failed_send_is_tried_again_after_a_backoff(
    ledger: Ledger, hook: HookServer, status: int, hang: bool, said: str
) -> None:
    hook.status, hook.hang = status, hang
    engine = _engine(ledger, [{"to": hook.url}])
    engine.run_once()
    [row] = _rows(ledger)
    assert (row.delivered_at, row.attempts, row.last_error) == (None, 1, said)
    assert row.next_try_at == utc("2026-03-01T12:01:01Z") + timedelta(seconds=30)
    assert engine.alerts.deliver_due().delivered == 0  # not before its next try
    hook.status, hook.hang = 200, False
    assert isinstance(engine.clock, FixedClock)
    engine.clock.advance(timedelta(seconds=30))
    assert engine.alerts.deliver_due().delivered == 1
    [row] = _rows(ledger)
    assert (row.attempts, row.last_error, row.next_try_at) == (2, None, None)
    assert row.delivered_at is not None


def test_a_route_that_keeps_failing_is_one_attention_item(ledger: Ledger, hook: HookServer) -> None:
    hook.status = 503
    engine = _engine(ledger, [{"to": hook.url}], at="2026-03-01T12:02:01Z")  # 12:01 and 12:02 fail
    engine.run_once()
    clock = engine.clock
    assert isinstance(clock, FixedClock)
    for wait in (30, 60):  # the backoff doubles
        with ledger.read() as session:
            assert alert_queries.failing_routes(session) == []
        clock.advance(timedelta(seconds=wait))
        assert len(engine.alerts.deliver_due().failed) == 2
    with ledger.read() as session:
        [failing] = alert_queries.failing_routes(session)
    assert (failing.route, failing.undelivered) == (hook.url, 2)
    assert failing.last_error == "HTTP 503 Service Unavailable"
    [need] = [n for n in person_needs(ledger, clock.now(), timedelta(minutes=5)) if n.kind is NeedKind.ALERTS]
    assert notice_text([need]) == f"1 alert route needs a decision: {hook.url} alerts not delivered"
    hook.status = 200
    clock.advance(timedelta(seconds=120))
    assert engine.alerts.deliver_due().delivered == 2
    with ledger.read() as session:
        assert alert_queries.failing_routes(session) == []
    keys = hook.idempotency_keys()
    # one send a round while the route fails (the other alert waits with it), then both delivered
    assert len(keys) == 5 and sorted(keys.count(k) for k in set(keys)) == [1, 4]


def test_a_route_kept_as_a_secret_never_shows_its_value(ledger: Ledger, hook: HookServer, keep_secrets: None) -> None:
    engine = _engine(ledger, [{"to": {"secret": "TEAM_HOOK"}}])
    engine.run_once()  # the secret is not set yet
    [row] = _rows(ledger)
    assert row.route == "{secret: TEAM_HOOK}"
    assert row.last_error is not None and row.last_error.startswith("secret TEAM_HOOK is not set on this host")
    secrets.store("TEAM_HOOK", hook.url + "?token=s3cr3t")
    assert isinstance(engine.clock, FixedClock)
    engine.clock.advance(timedelta(seconds=30))
    assert engine.alerts.deliver_due().delivered == 1
    [got] = hook.received
    assert got.path == "/hook?token=s3cr3t"
    with ledger.read() as session:
        stored = [str(r.data) + str(r.route) + str(r.last_error) for r in session.scalars(select(AlertOutbox))]
        stored += [str(e.data) for e in session.scalars(select(Event))]
    assert not any("s3cr3t" in text for text in stored)


def test_a_secret_that_holds_no_route_is_refused_without_its_value(keep_secrets: None) -> None:
    secrets.store("BAD_HOOK", "ftp://example.com/s3cr3t")
    sent = send(Alert("occ-x", "FAILED", "{secret: BAD_HOOK}", {"scheduleId": "x"}), None, timeout=0.5)
    assert sent == Sent(False, "the secret BAD_HOOK does not hold a route (mailto:, https://, or http:// to localhost)")


def test_a_mail_is_delivered_through_smtp(ledger: Ledger) -> None:
    with smtp_server() as box:
        _mail_once(ledger, box)


def _mail_once(ledger: Ledger, box: MailBox) -> None:
    engine = _engine(ledger, [{"to": "mailto:ops@example.com"}])
    with ledger.write() as session:
        smtp = Smtp("127.0.0.1", box.port, "none", sender="tidemark@example.com")
        alert_queries.set_smtp(session, smtp, START)
    engine.run_once()
    occ = _failed_id(ledger)
    [message] = box.messages
    assert box.envelopes == [("tidemark@example.com", ["ops@example.com"])]
    assert message["Subject"] == f"Tidemark: {SID} failed"
    assert message["Idempotency-Key"] == f"{occ}:FAILED"
    assert f"occurrenceId: {occ}" in message.get_payload()
    [row] = _rows(ledger)
    assert row.delivered_at is not None


def test_a_mail_route_without_smtp_settings_says_so(ledger: Ledger) -> None:
    _engine(ledger, [{"to": "mailto:ops@example.com"}]).run_once()
    [row] = _rows(ledger)
    assert row.last_error == "no SMTP server is set for mailto: routes; set one with schedctl alerts set --smtp-host"


def test_senders_sharing_the_outbox_deliver_each_alert_once(ledger: Ledger, hook: HookServer) -> None:
    routes = [{"to": f"{hook.url}?route={i}"} for i in range(12)]
    _engine(ledger, routes, deliver_alerts=False).run_once()
    assert len(_rows(ledger)) == 12
    clock = FixedClock(utc("2026-03-01T12:01:01Z"))
    senders = [AlertSender(ledger, clock, f"engine-{i}", timeout=2.0, batch=1) for i in range(4)]
    threads = [threading.Thread(target=s.deliver_due) for s in senders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(r.path for r in hook.received) == sorted(f"/hook?route={i}" for i in range(12))
    assert all(r.delivered_at is not None for r in _rows(ledger))


class _Killed(Exception):
    """The engine dies between a send and its record."""


def test_only_a_kill_between_send_and_record_repeats_an_alert_with_the_same_key(
    ledger: Ledger, hook: HookServer
) -> None:
    _engine(ledger, [{"to": hook.url}], deliver_alerts=False).run_once()
    clock = FixedClock(utc("2026-03-01T12:01:01Z"))

    def send_then_die(alert: Alert, smtp: Smtp | None, timeout: float) -> Sent:
        send(alert, smtp, timeout=timeout)
        raise _Killed

    dying = AlertSender(ledger, clock, "dies", transport=send_then_die)
    with pytest.raises(_Killed):
        dying.deliver_due()
    other = AlertSender(ledger, clock, "other")
    assert other.deliver_due().delivered == 0  # the dead engine's claim holds until it runs out
    clock.advance(dying.lease + timedelta(seconds=1))
    assert other.deliver_due().delivered == 1
    occ = _failed_id(ledger)
    assert hook.idempotency_keys() == [f"{occ}:FAILED", f"{occ}:FAILED"]  # one repeat, for the one kill
    clock.advance(timedelta(hours=1))
    assert other.deliver_due().delivered == 0
    assert len(hook.received) == 2


def test_a_running_engine_sends_on_its_own_thread(ledger: Ledger, hook: HookServer) -> None:
    engine = _engine(ledger, [{"to": hook.url}])
    runner = threading.Thread(target=engine.run_forever, kwargs={"poll_seconds": 0.05})
    runner.start()
    try:
        deadline = time.monotonic() + 20
        while not hook.received and time.monotonic() < deadline:
            time.sleep(0.02)  # the engine's threads run the task and send its alert
    finally:
        engine.stop()
        runner.join(20)
    assert [k.split(":")[1] for k in hook.idempotency_keys()] == ["FAILED"]
    senders = [t for t in threading.enumerate() if t.name == "tidemark-alerts"]
    for sender in senders:
        sender.join(5)  # it ends with the engine
    assert not any(t.is_alive() for t in senders)


def test_a_round_with_nothing_due_costs_one_statement(ledger: Ledger) -> None:
    sender = AlertSender(ledger, FixedClock(START), "idle")
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(ledger.engine, "before_cursor_execute", count)
    try:
        assert sender.deliver_due().delivered == 0
    finally:
        event.remove(ledger.engine, "before_cursor_execute", count)
    assert len(sent) == 1 and "min(alert_outbox.next_try_at)" in sent[0]


def test_a_hanging_route_costs_a_round_one_timeout(ledger: Ledger, hook: HookServer) -> None:
    hook.hang = True
    engine = _engine(ledger, [{"to": hook.url}], at="2026-03-01T12:03:01Z", deliver_alerts=False)
    engine.run_once()  # 12:01, 12:02 and 12:03 fail: three alerts to one route
    tries: list[str] = []

    def counted(alert: Alert, smtp: Smtp | None, timeout: float) -> Sent:
        tries.append(alert.occurrence_id)
        return send(alert, smtp, timeout=timeout)

    sender = AlertSender(ledger, engine.clock, "one", timeout=0.3, transport=counted)
    done = sender.deliver_due()
    assert len(tries) == 1 and done.failed == [f"{hook.url}: timed out after 0.3 s"] * 3
    assert [(r.attempts, r.last_error) for r in _rows(ledger)] == [(1, "timed out after 0.3 s")] * 3
