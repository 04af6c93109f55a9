"""A crashed engine's row is dead at once on its own host (core.engine.presence with
core.engine.processes): pid, process start time and boot id say so, whatever its
heartbeat; on another host the heartbeat's staleness still rules. Fixed clock,
SQLite and PostgreSQL."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import presence
from core.engine.presence import EngineRunningError, announce, live_engines
from core.engine.processes import ProcessIdentity, identify, this_host
from core.ledger.db import Ledger
from core.ledger.events import EventKind
from core.ledger.models import EngineKind, EnginePresence, EngineRow, Event

from . import NOW

#: Linux never hands out a pid above 2**22 (the largest pid_max): no process has this one.
FREE_PID = 2**22 + 1


def _me() -> ProcessIdentity:
    return identify()


#: (id, the recorded process, dead at once?)
CASES = [
    pytest.param(lambda: _me(), False, id="this_host_alive"),
    pytest.param(lambda: replace(_me(), pid=FREE_PID), True, id="this_host_pid_free"),
    pytest.param(lambda: replace(_me(), started=(_me().started or 0) - 3600), True, id="this_host_pid_reused"),
    pytest.param(lambda: replace(_me(), boot_id="an-earlier-boot"), True, id="this_host_earlier_boot"),
    pytest.param(lambda: replace(_me(), started=None), False, id="this_host_start_unknown"),
    pytest.param(lambda: replace(_me(), host="ops-box", pid=FREE_PID), False, id="other_host"),
]


def _crash(ledger: Ledger, clock: FixedClock, process: object) -> tuple[ProcessIdentity, str]:
    """An engine recorded as ``process()`` that stopped beating 21 s ago, well inside the staleness limit."""
    recorded: ProcessIdentity = process()  # type: ignore[operator]
    crashed = announce(ledger, clock, EngineKind.APP, process=recorded)
    clock.advance(timedelta(seconds=21))
    return recorded, crashed


def _ids(ledger: Ledger, clock: FixedClock) -> list[str]:
    with ledger.read() as session:
        return [e.engine_id for e in live_engines(session, clock.now())]


def test_announce_records_the_process_identity(ledger: Ledger, clock: FixedClock) -> None:
    me = identify()
    engine_id = announce(ledger, clock, EngineKind.APP)
    with ledger.read() as session:
        row = session.get(EngineRow, engine_id)
        assert row is not None
        assert (row.host, row.pid, row.boot_id) == (this_host(), os.getpid(), me.boot_id)
        assert row.process_started == pytest.approx(me.started)


@pytest.mark.parametrize(("process", "dead"), CASES)
def test_a_fresh_row_whose_process_is_gone_is_not_live(
    ledger: Ledger, clock: FixedClock, process: object, dead: bool
) -> None:
    _, crashed = _crash(ledger, clock, process)
    assert (crashed not in _ids(ledger, clock)) is dead
    with ledger.read() as session:
        assert (presence.other_dispatcher(session, clock.now()) is None) is dead


@pytest.mark.parametrize(("process", "dead"), CASES)
def test_the_next_exclusive_start_retires_a_dead_row_with_an_event(
    ledger: Ledger, clock: FixedClock, process: object, dead: bool
) -> None:
    recorded, crashed = _crash(ledger, clock, process)
    if not dead:
        with pytest.raises(EngineRunningError):
            announce(ledger, clock, EngineKind.APP, exclusive=True)
        clock.advance(presence.STALE_AFTER)  # the heartbeat rule, as before
    second = announce(ledger, clock, EngineKind.APP, exclusive=True)
    assert _ids(ledger, clock) == [second]
    with ledger.read() as session:
        row = session.get(EngineRow, crashed)
        assert row is not None
        events = list(session.scalars(select(Event).where(Event.kind == EventKind.ENGINE_FOUND_GONE)))
    if dead:
        assert row.state is EnginePresence.RETIRED and row.retired_at == NOW + timedelta(seconds=21)
        assert row.last_heartbeat == NOW, "the last heartbeat stays what it was"
        [event] = events
        assert event.at == NOW + timedelta(seconds=21)
        assert event.data == {
            "engine": crashed,
            "kind": "app",
            "host": recorded.host,
            "pid": recorded.pid,
            "lastHeartbeat": "2026-03-01T12:00:00Z",
        }
    else:
        assert row.state is EnginePresence.RUNNING, "an engine that may live is only ever stale, never retired"
        assert events == []


def test_a_retired_dead_row_is_not_retired_again(ledger: Ledger, clock: FixedClock) -> None:
    announce(ledger, clock, EngineKind.HEADLESS, process=replace(identify(), pid=FREE_PID))
    announce(ledger, clock, EngineKind.APP, exclusive=True)
    announce(ledger, clock, EngineKind.APP)
    with ledger.read() as session:
        assert len(list(session.scalars(select(Event).where(Event.kind == EventKind.ENGINE_FOUND_GONE)))) == 1
