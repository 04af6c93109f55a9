"""Where each revision came from (migration 0005): the file published and its host,
read back by the schedule summaries and by :func:`published_schedule`."""

from __future__ import annotations

import socket
from pathlib import Path

from alembic import command
from sqlalchemy import inspect, select, text

from core.clock import FixedClock
from core.ledger.db import Ledger, alembic_config
from core.ledger.models import Revision
from core.ledger.publish import RevisionSource, publish
from core.ledger.queries import list_schedules, published_schedule
from core.ledger.states import ScheduleState

from . import NOW, spec, utc

SID = "daily-ops-summary"


def test_a_revision_records_its_file_and_host(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> None:
    first = RevisionSource(str(tmp_path / "morning.yaml"), "alpha")
    second = RevisionSource(str(tmp_path / "evening.yaml"), "beta")
    with ledger.write() as session:
        publish(session, spec(title="Morning"), clock, source=first)
        publish(session, spec(revision=2, title="Evening"), clock, source=second)
    with ledger.read() as session:
        rows = {r.revision: (r.source_path, r.source_host) for r in session.scalars(select(Revision))}
        [summary] = list_schedules(session)
        found = published_schedule(session, SID, NOW)
    assert rows == {1: (first.path, "alpha"), 2: (second.path, "beta")}
    # The summary speaks of the active revision: the second file's.
    assert (summary.source_path, summary.source_host) == (second.path, "beta")
    assert found is not None
    assert (found.active_revision, found.title, found.state) == (2, "Evening", ScheduleState.ACTIVE)
    assert (found.source_path, found.source_host) == (second.path, "beta")
    assert found.spec().title == "Evening"


def test_a_revision_without_a_known_file_records_none(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
    with ledger.read() as session:
        [summary] = list_schedules(session)
        found = published_schedule(session, SID, NOW)
        assert published_schedule(session, "never-published", NOW) is None
    assert (summary.source_path, summary.source_host) == (None, None)
    assert found is not None and (found.source_path, found.source_host) == (None, None)


def test_published_schedule_gives_the_next_run_before_anything_is_materialized(
    ledger: Ledger, clock: FixedClock
) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
    with ledger.read() as session:
        found = published_schedule(session, SID, NOW)
    assert found is not None and found.next_due_at == utc("2026-03-02T07:30:00Z")


def test_of_file_is_absolute_and_names_this_host(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = RevisionSource.of_file("morning.yaml")
    assert source == RevisionSource(str(tmp_path.resolve() / "morning.yaml"), socket.gethostname())


def test_upgrading_keeps_older_revisions_with_no_source(ledger: Ledger, clock: FixedClock) -> None:
    """A ledger published to before 0005 keeps its revisions; they simply do not know their file."""
    with ledger.write() as session:
        publish(session, spec(), clock)
    with ledger.engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0004")
        assert "source_path" not in {c["name"] for c in inspect(conn).get_columns("revisions")}
        command.upgrade(alembic_config(conn), "head")
        assert conn.execute(text("SELECT revision, source_path, source_host FROM revisions")).all() == [(1, None, None)]
