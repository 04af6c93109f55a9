"""Commands for a front end that holds a Ledger (``core.ledger.publish``: one call, one write
transaction), and the database's failures in the core's words (``core.ledger.access``,
``core.ledger.db.check_url``). On SQLite and PostgreSQL, but the lock, which is SQLite's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError

from core.clock import FixedClock
from core.errors import LedgerError, LedgerUnavailable, UserError
from core.ledger.access import database_failures, reading, unavailable, writing
from core.ledger.db import Ledger, check_url, open_ledger
from core.ledger.models import Event, Schedule
from core.ledger.publish import Gate, RevisionSource, change_gate, publish, publish_new, publish_to
from core.ledger.queries import published_schedule
from core.ledger.states import ScheduleState

from . import spec

MISSING = {"argv": ["/nonexistent/tidemark-test-program"]}


def _events(ledger: Ledger) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(func.count()).select_from(Event)) or 0)


def _state(ledger: Ledger, schedule_id: str) -> ScheduleState:
    with ledger.read() as session:
        schedule = session.get(Schedule, schedule_id)
        assert schedule is not None
        return schedule.state


def test_publish_to_writes_the_revision_with_its_source(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> None:
    source = RevisionSource.of_file(tmp_path / "daily.yaml")
    result = publish_to(ledger, spec(), clock, source=source)
    assert result.schedule_id == "daily-ops-summary" and result.revision == 1
    with ledger.read() as session:
        found = published_schedule(session, "daily-ops-summary", clock.now())
    assert found is not None and found.source_path == str(tmp_path / "daily.yaml")


def test_a_refused_publish_writes_nothing(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(UserError, match="tidemark-test-program"):
        publish_to(ledger, spec(task=MISSING), clock)
    assert _events(ledger) == 0
    publish_to(ledger, spec(task=MISSING), clock, check_task=False)
    assert _events(ledger) > 0


def test_gates_move_in_one_transaction_each(ledger: Ledger, clock: FixedClock) -> None:
    publish_to(ledger, spec(), clock)
    change = change_gate(ledger, "daily-ops-summary", Gate.PAUSE, clock, "maintenance")
    assert (change.old, change.new) == (ScheduleState.ACTIVE, ScheduleState.PAUSED)
    assert change_gate(ledger, "daily-ops-summary", Gate("resume"), clock).new is ScheduleState.ACTIVE
    change_gate(ledger, "daily-ops-summary", Gate.DISABLE, clock, "retired")
    assert _state(ledger, "daily-ops-summary") is ScheduleState.DISABLED
    before = _events(ledger)
    with pytest.raises(LedgerError, match="resume it before pausing it"):
        change_gate(ledger, "daily-ops-summary", Gate.PAUSE, clock)
    assert _events(ledger) == before and _state(ledger, "daily-ops-summary") is ScheduleState.DISABLED


def test_publish_new_leaves_out_what_is_there_or_refused(ledger: Ledger, clock: FixedClock) -> None:
    publish_to(ledger, spec(scheduleId="kept"), clock)
    wanted = [
        (spec(scheduleId="kept", revision=2), None),  # already published: left alone, not revised
        (spec(scheduleId="fresh"), None),
        (spec(scheduleId="broken", task=MISSING), None),
    ]
    seeded = publish_new(ledger, wanted, clock)
    assert seeded.published == ["fresh"] and not seeded.had_schedules
    assert len(seeded.skipped) == 1 and seeded.skipped[0].startswith("broken: ")
    with ledger.read() as session:
        assert sorted(session.scalars(select(Schedule.id))) == ["fresh", "kept"]
        kept = published_schedule(session, "kept", clock.now())
    assert kept is not None and kept.active_revision == 1


def test_publish_new_into_an_empty_ledger_only(ledger: Ledger, clock: FixedClock) -> None:
    first = publish_new(
        ledger, [(spec(scheduleId="a"), None), (spec(scheduleId="b"), None)], clock, only_into_empty=True
    )
    assert first.published == ["a", "b"]
    again = publish_new(ledger, [(spec(scheduleId="c"), None)], clock, only_into_empty=True)
    assert again.had_schedules and again.published == [] and again.skipped == []


def test_a_write_that_fails_is_rolled_back_whole(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(RuntimeError), writing(ledger) as session:
        publish(session, spec(), clock)
        session.flush()
        raise RuntimeError("a failure between two steps")
    with reading(ledger) as session:
        assert session.get(Schedule, "daily-ops-summary") is None


def test_the_database_s_failures_in_the_core_s_words() -> None:
    locked = OperationalError("BEGIN IMMEDIATE", {}, sqlite3.OperationalError("database is locked"))
    said = unavailable(locked)
    assert isinstance(said, LedgerError) and said.busy and said.detail == "database is locked"
    assert str(said) == "the ledger is locked by another program (database is locked)"
    gone = unavailable(OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly\nmore")))
    assert not gone.busy and str(gone) == "the ledger cannot be used (server closed the connection unexpectedly)"
    with pytest.raises(LedgerUnavailable) as raised, database_failures():
        raise IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed"))
    assert raised.value.detail == "UNIQUE constraint failed"
    with pytest.raises(LedgerUnavailable) as raised, database_failures():  # the driver's own, from a begin hook
        raise sqlite3.OperationalError("database is locked")
    assert raised.value.busy
    with pytest.raises(ValueError), database_failures():  # not the database's: passes through
        raise ValueError("a bug")


def test_a_locked_sqlite_ledger_is_unavailable_not_a_driver_error(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "ledger.db"
    holder = open_ledger(str(path), clock)
    other = open_ledger(str(path), clock, busy_timeout=0.05)
    try:
        publish_to(holder, spec(), clock)
        with holder.write(), pytest.raises(LedgerUnavailable) as raised:
            change_gate(other, "daily-ops-summary", Gate.PAUSE, clock)
        assert raised.value.busy
        assert _state(holder, "daily-ops-summary") is ScheduleState.ACTIVE
    finally:
        other.close()
        holder.close()


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://u:Hunter2-zq@host/db", "mysql://u:***@host/db: unsupported database 'mysql'"),
        ("postgresql://u:Hunter2-zq@[::1:1/db", "postgresql://u:***@[::1:1/db: not a database URL"),
        ("sqlite://", "a ledger must be a SQLite file"),
    ],
    ids=["unsupported", "unreadable_host", "memory"],
)
def test_check_url_refuses_what_cannot_be_a_ledger(url: str, said: str) -> None:
    with pytest.raises(LedgerError) as raised:
        check_url(url)
    assert said in str(raised.value) and "Hunter2" not in str(raised.value)


def test_check_url_says_where_without_the_password(tmp_path: Path) -> None:
    assert check_url(str(tmp_path / "x.db")) == str(tmp_path / "x.db")
    assert check_url("postgresql://u:Hunter2-zq@db.example/ledger") == "postgresql+psycopg://u:***@db.example/ledger"
    assert not (tmp_path / "x.db").exists()  # nothing opened, nothing created
