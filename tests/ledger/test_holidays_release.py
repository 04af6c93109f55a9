"""The holidays data's release is recorded with a revision and each occurrence of a
schedule with a business calendar (migration 0010); a newer release that adds a
holiday never moves a materialized occurrence, and ``drift`` and ``shadow`` report
the occurrences it would change. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, timedelta

import pytest
from sqlalchemy import select

from core import cli
from core.calendar import business_days, holiday_codes
from core.clock import FixedClock
from core.enums import Status
from core.ledger.compiled import forget_compiled
from core.ledger.db import Ledger
from core.ledger.drift_attention import drift_attention, record_drift
from core.ledger.materialize import drift, forget_expansions, materialize
from core.ledger.models import Event, Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.shadow import shadow
from core.render.shadow_table import summary_line
from core.spec.model import ScheduleSpec
from tests.tzdata_change import install_tzdata, new_york_a_week_late

from . import spec

SID = "daily-ops-summary"
INSTALLED = holiday_codes.holidays_version()
#: A Thursday in the default window (NOW is Sun 2026-03-01 12:00Z): a new release's holiday.
NEW_HOLIDAY = date(2026, 3, 5)


def _calendar_spec() -> ScheduleSpec:
    return spec(
        rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        horizon="P7D",
        businessCalendar={"holidays": ["US-NY"]},
        holidayPolicy="SKIP",
    )


def _forget() -> None:
    forget_compiled()
    forget_expansions()


@pytest.fixture
def newer_release(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Install, in effect, a holidays release "99.1" that adds a holiday on 2026-03-05 in US-NY."""

    def days(code: str, year: int) -> dict[date, str]:
        found = dict(holiday_codes.closed_days(code, year))
        if code == "US-NY" and year == NEW_HOLIDAY.year:
            found[NEW_HOLIDAY] = "Founders' Day"
        return found

    def arm() -> None:
        monkeypatch.setattr(business_days, "closed_days", days)
        monkeypatch.setattr(holiday_codes, "holidays_version", lambda: "99.1")
        _forget()

    yield arm
    _forget()


def _publish_and_materialize(ledger: Ledger, clock: FixedClock, *specs: ScheduleSpec) -> None:
    with ledger.write() as session:
        for s in specs:
            publish(session, s, clock)
    with ledger.write() as session:
        for s in specs:
            materialize(session, s.schedule_id, clock)


def test_the_release_is_recorded_with_a_calendar_and_only_then(ledger: Ledger, clock: FixedClock) -> None:
    plain = spec(scheduleId="no-calendar")
    _publish_and_materialize(ledger, clock, _calendar_spec(), plain)
    with ledger.read() as session:
        revisions = dict(session.execute(select(Revision.schedule_id, Revision.holidays_version)).all())
        rows = session.execute(select(Occurrence.schedule_id, Occurrence.holidays_version)).all()
    assert revisions == {SID: INSTALLED, "no-calendar": None}
    assert {v for s, v in rows if s == SID} == {INSTALLED}
    assert {v for s, v in rows if s == "no-calendar"} == {None}


def test_a_newer_release_moves_nothing_and_is_reported(
    ledger: Ledger,
    ledger_url: str,
    clock: FixedClock,
    newer_release: Callable[[], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _publish_and_materialize(ledger, clock, _calendar_spec())
    with ledger.read() as session:
        before = {
            o.nominal_local: (o.state, o.resolved_utc, o.holidays_version) for o in session.scalars(select(Occurrence))
        }
    newer_release()
    clock.set(clock.now() + timedelta(hours=1))
    with ledger.write() as session:
        materialize(session, SID, clock)  # already materialized that far: nothing rewritten
    with ledger.read() as session:
        after = {
            o.nominal_local: (o.state, o.resolved_utc, o.holidays_version) for o in session.scalars(select(Occurrence))
        }
        items = drift(session, clock)
        report = shadow(session, clock)
    assert {k: v for k, v in after.items() if k in before} == before
    [item] = items
    assert (item.nominal_local, item.current_status, item.current_resolved_utc) == (
        "2026-03-05T09:00:00",
        Status.EXCLUDED,
        None,
    )
    assert (item.stored_holidays_version, item.current_holidays_version) == (INSTALLED, "99.1")
    assert not report.equal
    moved = {(d.nominal_local, d.what) for d in report.differences}
    assert ("2026-03-05T09:00:00", "state") in moved
    assert report.holidays_version == "99.1" and report.to_json()["holidaysVersion"] == "99.1"
    assert f"tzdb {report.tzdb_version}, holidays 99.1, at " in summary_line(report)
    reasons = [d.recomputed for d in report.differences if d.what == "reason"]
    assert reasons == ["2026-03-05 is Founders' Day in US-NY"]
    assert cli.main(["drift", "--db", ledger_url, "--now", clock.now().isoformat()]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].endswith(
        f"2026-03-05T09:00:00#0: 2026-03-05T14:00:00Z (tzdb {item.stored_tzdb_version}, holidays {INSTALLED}; "
        "installed 99.1) → no instant (EXCLUDED)"
    )
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == [SID]
    with ledger.read() as session:
        [attention] = drift_attention(session)
    assert attention.text == "the installed holidays data changes 1 future run; republish to follow"
    assert attention.republish_label == "Republish under the installed holidays data"


def test_a_second_holidays_release_under_the_same_tz_release_raises_the_item_again(
    ledger: Ledger, clock: FixedClock, newer_release: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish_and_materialize(ledger, clock, _calendar_spec())
    newer_release()
    with ledger.read() as session:
        items = drift(session, clock)
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == [SID]
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == []  # the same release: told already
    monkeypatch.setattr(holiday_codes, "holidays_version", lambda: "99.2")
    _forget()
    with ledger.read() as session:
        items = drift(session, clock)
    assert items
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == [SID]
    with ledger.read() as session:
        [attention] = drift_attention(session)
    assert attention.text == "the installed holidays data changes 1 future run; republish to follow"


def test_a_schedule_without_a_calendar_records_no_holidays_release(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    _publish_and_materialize(ledger, clock, spec(scheduleId="no-calendar"))
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    with ledger.read() as session:
        items = drift(session, clock)
    assert items
    with ledger.write() as session:
        assert record_drift(session, clock.now(), items) == ["no-calendar"]
    with ledger.read() as session:
        data = session.scalars(select(Event.data).where(Event.kind == "schedule.drift_found")).one()
    assert data is not None and "tzdbVersion" in data and "holidaysVersion" not in data
