"""Every revision and occurrence records the Tidemark version that computed it; the ledger
records the newest version that has run an engine on it (migration 0009)."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import DBAPIError

from core.clock import FixedClock
from core.engine.admin import run_now
from core.ledger.db import Ledger, open_ledger
from core.ledger.engine_version import ledger_engine_version, record_engine_version
from core.ledger.materialize import materialize
from core.ledger.models import Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.states import OccurrenceKind
from core.version import tidemark_version

from . import spec
from .test_roles import ON_POSTGRESQL, as_role, grant, names, pg_url  # noqa: F401 (fixtures)

SID = "daily-ops-summary"


def test_a_published_revision_and_its_occurrences_record_the_tidemark_version(
    ledger: Ledger, clock: FixedClock
) -> None:
    with ledger.write() as session:
        publish(session, spec(horizon="P2D"), clock)
        materialize(session, SID, clock)
    run_now(ledger, SID, clock)
    with ledger.read() as session:
        revisions = list(session.scalars(select(Revision.engine_version)))
        rows = list(session.execute(select(Occurrence.kind, Occurrence.engine_version)))
    assert tidemark_version() not in ("", None)
    assert revisions == [tidemark_version()]
    assert {kind for kind, _ in rows} == {OccurrenceKind.SCHEDULED, OccurrenceKind.MANUAL}
    assert {version for _, version in rows} == {tidemark_version()}


def test_rows_written_before_0009_say_they_do_not_know(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(horizon="P2D"), clock)
        materialize(session, SID, clock)
        session.execute(update(Occurrence).values(engine_version=None))
        session.execute(update(Revision).values(engine_version=None))
    with ledger.read() as session:
        assert session.scalars(select(Occurrence.engine_version)).all() == [None, None]


def test_the_ledger_records_the_newest_version_that_ran_an_engine(ledger: Ledger) -> None:
    with ledger.read() as session:
        assert ledger_engine_version(session) is None  # no engine has recorded one yet
    with ledger.write() as session:
        record_engine_version(session, "1.4.0")
    with ledger.read() as session:
        assert ledger_engine_version(session) == "1.4.0"
    with ledger.write() as session:
        record_engine_version(session, "1.5.0")
    with ledger.read() as session:
        assert ledger_engine_version(session) == "1.5.0"


@ON_POSTGRESQL
def test_an_engine_role_may_record_its_version_and_a_viewer_may_not(
    pg_url: str,  # noqa: F811 (the fixture imported above)
    names: dict[str, str],  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    grant(capsys, pg_url, names["engine"], "engine")
    grant(capsys, pg_url, names["viewer"], "viewer")
    with open_ledger(as_role(pg_url, names["engine"])) as ledger, ledger.write() as session:
        record_engine_version(session, "2.0.0")
    with pytest.raises(DBAPIError), open_ledger(as_role(pg_url, names["viewer"])) as ledger, ledger.write() as session:
        record_engine_version(session, "9.9.9")
    with open_ledger(pg_url) as ledger, ledger.read() as session:
        assert ledger_engine_version(session) == "2.0.0"
