"""A zone change keeps a period's promise (docs/decisions.md, "A zone change at a
cutover"): a revision that moves a schedule with a ``businessPeriod`` to another
zone runs each period exactly once, whatever the cutover's time against both
zones' run times. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine
from core.ledger.db import Ledger
from core.ledger.future_diff import future_diff
from core.ledger.models import Event, Occurrence
from core.ledger.period_carry import carried_id
from core.ledger.publish import publish_to
from core.ledger.states import OccurrenceKind, OccurrenceState

from . import spec, utc

NEW_YORK, PARIS = "America/New_York", "Europe/Paris"
SID = "daily-ops-summary"
WEEKDAYS = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0"


def report(zone: str, revision: int, *, monthly: bool = False, **extra: Any) -> Any:
    """The 09:00 report in ``zone``, one run per day (or per month, on the 1st)."""
    keys: dict[str, Any] = {
        "timeZone": zone,
        "revision": revision,
        "rule": "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0" if monthly else "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "businessPeriod": "{nominal:%Y-%m}" if monthly else "{nominal:%Y-%m-%d}",
        "start": "2027-01-01T00:00:00",
    }
    return spec(**(keys | extra))


def hours(start: str, end: str) -> list[datetime]:
    """Every whole hour from ``start`` to ``end`` (UTC), both included."""
    first, last = utc(start), utc(end)
    return [first + timedelta(hours=h) for h in range(int((last - first) / timedelta(hours=1)) + 1)]


Move = tuple[str, str, datetime]


def live(ledger: Ledger, clock: FixedClock, passes: list[datetime], move: Move, monthly: bool, **new: Any) -> None:
    """Engine passes at each of ``passes``; at ``move``'s instant revision 2 moves the schedule
    (with ``new``'s other changes)."""
    old, zone, cutover = move
    publish_to(ledger, report(old, 1, monthly=monthly), clock, check_task=False)
    engine = Engine(ledger, clock)
    moved = False
    for when in passes:
        if not moved and when >= cutover:
            clock.set(cutover)
            publish_to(ledger, report(zone, 2, monthly=monthly, **new), clock, check_task=False)
            moved = True
        clock.set(when)
        engine.run_once()


def runs_by_period(ledger: Ledger) -> tuple[Counter[str], list[Occurrence]]:
    """How many runs succeeded in each period, and every occurrence."""
    with ledger.read() as session:
        rows = list(session.scalars(select(Occurrence).where(Occurrence.schedule_id == SID)))
        session.expunge_all()
    ran = Counter(o.business_period for o in rows if o.state is OccurrenceState.SUCCEEDED)
    return ran, rows  # type: ignore[return-value]


DAYS = ["2027-01-13", "2027-01-14", "2027-01-15", "2027-01-16", "2027-01-17"]

# Both zones' 09:00 on 2027-01-15: Paris 08:00Z, New York 14:00Z.
CUTOVERS = {
    "before both": "2027-01-15T06:00:00Z",
    "between": "2027-01-15T10:00:00Z",
    "after both": "2027-01-15T15:00:00Z",
}


@pytest.mark.parametrize(("old", "new"), [(NEW_YORK, PARIS), (PARIS, NEW_YORK)], ids=["ny-to-paris", "paris-to-ny"])
@pytest.mark.parametrize("cutover", list(CUTOVERS), ids=lambda c: c.replace(" ", "-"))
def test_a_daily_report_runs_each_day_once_across_a_move(
    ledger: Ledger, clock: FixedClock, old: str, new: str, cutover: str
) -> None:
    clock.set(utc("2027-01-12T00:00:00Z"))
    live(
        ledger, clock, hours("2027-01-12T00:00:00Z", "2027-01-18T00:00:00Z"), (old, new, utc(CUTOVERS[cutover])), False
    )
    ran, rows = runs_by_period(ledger)
    assert {day: ran[day] for day in DAYS} == dict.fromkeys(DAYS, 1)
    for o in rows:  # a duplicate names the revision that keeps the period
        if o.state is OccurrenceState.SKIPPED_DUPLICATE:
            assert "same business period" in (o.reason or "") and "of revision" in (o.reason or ""), o.reason


@pytest.mark.parametrize(("old", "new"), [(NEW_YORK, PARIS), (PARIS, NEW_YORK)], ids=["ny-to-paris", "paris-to-ny"])
@pytest.mark.parametrize("cutover", ["2027-02-01T06:00:00Z", "2027-02-01T10:00:00Z", "2027-02-01T15:00:00Z"])
def test_a_monthly_report_runs_each_month_once_across_a_move(
    ledger: Ledger, clock: FixedClock, old: str, new: str, cutover: str
) -> None:
    clock.set(utc("2027-01-31T00:00:00Z"))
    passes = hours("2027-01-31T00:00:00Z", "2027-02-02T00:00:00Z") + hours(
        "2027-03-01T00:00:00Z", "2027-03-02T00:00:00Z"
    )
    live(ledger, clock, passes, (old, new, utc(cutover)), True)
    ran, _ = runs_by_period(ledger)
    assert (ran["2027-02"], ran["2027-03"]) == (1, 1)


def test_the_dropped_day_runs_at_the_old_time_as_the_new_revisions_carried_run(
    ledger: Ledger, clock: FixedClock
) -> None:
    """New York to Paris at 10:00Z: Paris's 09:00 (08:00Z) came before the cutover and New
    York's 14:00Z run is superseded, so revision 2 runs the day at 14:00Z, saying why."""
    clock.set(utc("2027-01-14T00:00:00Z"))
    live(
        ledger,
        clock,
        hours("2027-01-14T00:00:00Z", "2027-01-16T00:00:00Z"),
        (NEW_YORK, PARIS, utc(CUTOVERS["between"])),
        False,
    )
    _, rows = runs_by_period(ledger)
    day = sorted(
        (o.kind.value, o.revision, o.state.value, o.position_utc) for o in rows if o.business_period == "2027-01-15"
    )
    assert day == [
        ("carried", 2, "SUCCEEDED", utc("2027-01-15T14:00:00Z")),
        ("scheduled", 1, "CANCELLED", utc("2027-01-15T14:00:00Z")),
    ]
    [carried] = [o for o in rows if o.kind is OccurrenceKind.CARRIED]
    with ledger.read() as session:  # the occurrence's reason is its outcome's now; its event says why it was made
        [made] = session.scalars(
            select(Event.data).where(Event.occurrence_id == carried.occurrence_id, Event.kind == "occurrence.created")
        )
    assert made["kind"] == "carried" and made["reason"] == (
        "keeps business period 2027-01-15: revision 2 took over at 2027-01-15T10:00:00Z, after its own run for this "
        "period would have been, so it runs at revision 1's time (in place of "
        f"{next(o.occurrence_id for o in rows if o.state is OccurrenceState.CANCELLED)})"
    )


def test_a_new_rule_without_that_day_carries_nothing(ledger: Ledger, clock: FixedClock) -> None:
    """Moved on Saturday 2027-01-16 to Paris on weekdays only: Saturday is no longer part of
    the promise, so New York's Saturday run is superseded and nothing runs that day."""
    clock.set(utc("2027-01-15T00:00:00Z"))
    move = (NEW_YORK, PARIS, utc("2027-01-16T10:00:00Z"))
    live(ledger, clock, hours("2027-01-15T00:00:00Z", "2027-01-19T00:00:00Z"), move, False, rule=WEEKDAYS)
    ran, rows = runs_by_period(ledger)
    assert [ran[d] for d in ("2027-01-15", "2027-01-16", "2027-01-17", "2027-01-18")] == [1, 0, 0, 1]
    assert not [o for o in rows if o.kind is OccurrenceKind.CARRIED]


def test_the_carried_id_is_the_same_everywhere() -> None:
    assert carried_id(SID, 2, "2027-01-15") == carried_id(SID, 2, "2027-01-15")
    assert (
        len({carried_id(SID, 2, "2027-01-15"), carried_id(SID, 3, "2027-01-15"), carried_id(SID, 2, "2027-01-16")}) == 3
    )


def test_the_diff_of_the_future_shows_the_carried_run_instead_of_a_vanishing_one(
    ledger: Ledger, clock: FixedClock
) -> None:
    clock.set(utc("2027-01-14T00:00:00Z"))
    live(
        ledger,
        clock,
        hours("2027-01-14T00:00:00Z", "2027-01-15T10:00:00Z"),
        (NEW_YORK, PARIS, utc("2099-01-01T00:00:00Z")),
        False,
    )
    with ledger.read() as session:
        diff = future_diff(session, report(PARIS, 2), clock.now())
    assert [(r.nominal_local, r.position_utc, r.business_period) for r in diff.carried] == [
        ("2027-01-15T09:00:00", utc("2027-01-15T14:00:00Z"), "2027-01-15")
    ]
    assert "2027-01-15" not in {r.business_period for r in diff.vanish}
    publish_to(ledger, report(PARIS, 2), clock, check_task=False)  # and publishing does what it said
    _, rows = runs_by_period(ledger)
    assert [(o.kind, o.position_utc) for o in rows if o.kind is OccurrenceKind.CARRIED] == [
        (OccurrenceKind.CARRIED, utc("2027-01-15T14:00:00Z"))
    ]
