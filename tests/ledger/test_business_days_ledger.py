"""The ledger honours a business calendar: the rows materialized in several steps (the
clock moving a day at a time, so moves cross the edges of what each step covers)
are exactly the preview's rows, with the same identities, statuses, instants and
reasons. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.ledger.compiled import compiled_revision
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.models import Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.states import FROM_STATUS
from core.recurrence.expand import expand

from . import spec, utc

SID = "daily-ops-summary"
START = datetime(2027, 11, 18, 12, tzinfo=UTC)


@pytest.mark.parametrize("policy", ["SKIP", "NEXT_BUSINESS_DAY", "PREVIOUS_BUSINESS_DAY"])
def test_materialized_rows_are_the_preview_rows(ledger: Ledger, policy: str) -> None:
    clock = FixedClock(START)
    calendar = {"holidays": ["US-NY"], "closed": ["2027-12-23", "2027-11-22"]}
    with ledger.write() as session:
        publish(
            session,
            spec(
                rule="FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=9;BYMINUTE=0",
                horizon="P3D",
                businessCalendar=calendar,
                holidayPolicy=policy,
            ),
            clock,
        )
    for _ in range(45):
        with ledger.write() as session:
            materialize(session, SID, clock)
        clock.set(clock.now() + timedelta(days=1))
    with ledger.read() as session:
        revision = session.scalars(select(Revision).where(Revision.schedule_id == SID)).one()
        stored = list(session.scalars(select(Occurrence).where(Occurrence.schedule_id == SID)))
        compiled = compiled_revision(revision.spec_json, revision.tzif)
    end = _utc(max(o.position_utc for o in stored))
    assert end is not None
    preview = expand(compiled, START, end + timedelta(seconds=1))
    got = sorted((o.occurrence_id, o.nominal_local, o.state.value, _utc(o.resolved_utc), o.reason) for o in stored)
    want = sorted(
        (r.occurrence_id, r.nominal_local, FROM_STATUS[r.status].value, r.resolved, r.reason) for r in preview
    )
    assert got == want
    by_day = {o.nominal_local[:10]: (o.state.value, _utc(o.resolved_utc), o.reason) for o in stored}
    moved = {
        "SKIP": [("EXCLUDED", None, "2027-11-25 is Thanksgiving Day in US-NY")],
        "NEXT_BUSINESS_DAY": [
            ("PLANNED", utc("2027-11-26T14:00:00Z"), "2027-11-25 is Thanksgiving Day in US-NY: "
             "moved to the next business day, Fri 2027-11-26"),
        ],
        "PREVIOUS_BUSINESS_DAY": [
            ("PLANNED", utc("2027-11-24T14:00:00Z"), "2027-11-25 is Thanksgiving Day in US-NY: "
             "moved to the previous business day, Wed 2027-11-24"),
        ],
    }[policy]  # fmt: skip
    assert [by_day["2027-11-25"]] == moved
    assert by_day["2027-11-22"][2] is not None and by_day["2027-11-22"][2].startswith(
        "2027-11-22 is closed (businessCalendar.closed)"
    )
    assert len(stored) == 14  # Mondays and Thursdays from 2027-11-18 to 2028-01-03


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value if value.tzinfo is not None else value.replace(tzinfo=UTC)
