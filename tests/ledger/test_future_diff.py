"""The diff of the future (core.ledger.future_diff): what publishing a revision
would make appear, vanish or move, and which running or uncertain occurrences it
leaves alone. Real New York and London dates around the 2026 spring change; on
SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, update

from core.clock import FixedClock
from core.ledger.db import Ledger
from core.ledger.future_diff import FutureDiff, future_diff
from core.ledger.materialize import materialize_all
from core.ledger.models import Event, Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.spec.canonical import canonical_dict
from core.spec.validation import parse_spec

from . import NOW, spec, utc

TEN_DAYS = timedelta(days=10)


@pytest.fixture
def daily(ledger: Ledger, clock: FixedClock) -> Ledger:
    """Revision 1 of the daily 02:30 New York schedule, materialized at NOW (2026-03-01 12:00Z)."""
    with ledger.write() as session:
        publish(session, spec(cutoverAt="2026-03-01T00:00:00Z"), clock)
        materialize_all(session, clock)
    return ledger


def diff(ledger: Ledger, clock: FixedClock, **overrides: object) -> FutureDiff:
    with ledger.read() as session:
        return future_diff(session, spec(revision=2, **overrides), clock.now(), TEN_DAYS)


def nominals(rows: object) -> list[str]:
    return [r.nominal_local for r in rows]  # type: ignore[attr-defined]


def test_moving_0230_to_0330_in_new_york(daily: Ledger, clock: FixedClock) -> None:
    found = diff(daily, clock, rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30")
    assert found.cutover_at == NOW and found.end == NOW + TEN_DAYS and not found.new_schedule
    assert found.published_revision == 1
    # 02:30 does not exist on 2026-03-08 (skipped); 03:30 does: a run appears that day.
    assert [(r.nominal_local, r.resolved_utc) for r in found.appear] == [
        ("2026-03-08T03:30:00", utc("2026-03-08T07:30:00Z"))
    ]
    assert found.vanish == ()
    assert [(m.before.nominal_local, m.after.nominal_local) for m in found.moves][:2] == [
        ("2026-03-02T02:30:00", "2026-03-02T03:30:00"),
        ("2026-03-03T02:30:00", "2026-03-03T03:30:00"),
    ]
    assert len(found.moves) == 9
    assert {m.shift for m in found.moves} == {timedelta(hours=1)}
    assert found.moves[-1].after.resolved_utc == utc("2026-03-11T07:30:00Z")
    assert found.untouched == () and found.unchanged == 0
    assert all(m.before.state is S.PLANNED for m in found.moves), "materialized rows carry their ledger state"


def test_changing_the_zone_moves_every_run_to_london(daily: Ledger, clock: FixedClock) -> None:
    found = diff(daily, clock, timeZone="Europe/London")
    assert nominals(found.appear) == ["2026-03-08T02:30:00"]  # skipped in New York, a plain 02:30 GMT in London
    assert found.appear[0].time_zone == "Europe/London"
    by_day = {m.before.nominal_local[:10]: m for m in found.moves}
    assert len(by_day) == 9 and found.vanish == ()
    assert by_day["2026-03-07"].before.resolved_utc == utc("2026-03-07T07:30:00Z")  # EST
    assert by_day["2026-03-07"].after.resolved_utc == utc("2026-03-07T02:30:00Z")  # GMT
    assert by_day["2026-03-07"].shift == timedelta(hours=-5)
    assert by_day["2026-03-09"].shift == timedelta(hours=-4)  # New York is on EDT by then
    assert by_day["2026-03-09"].before.time_zone == "America/New_York"


def test_a_running_occurrence_stays_and_is_listed(daily: Ledger, clock: FixedClock) -> None:
    clock.set(utc("2026-03-02T07:31:00Z"))
    with daily.write() as session:
        session.execute(
            update(Occurrence).where(Occurrence.nominal_local == "2026-03-02T02:30:00").values(state=S.RUNNING)
        )
        session.execute(
            update(Occurrence).where(Occurrence.nominal_local == "2026-03-01T02:30:00").values(state=S.UNKNOWN_EFFECT)
        )
    with daily.read() as session:
        found = future_diff(
            session, spec(revision=2, rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30"), utc("2026-03-02T07:00:00Z"), TEN_DAYS
        )
    assert [(r.nominal_local, r.state) for r in found.untouched] == [
        ("2026-03-01T02:30:00", S.UNKNOWN_EFFECT),
        ("2026-03-02T02:30:00", S.RUNNING),
    ]
    assert "2026-03-02T02:30:00" not in nominals(found.vanish) + nominals(m.before for m in found.moves)
    # The running 02:30 is not cancelled, so the new 03:30 of the same day is an extra run: it appears.
    assert nominals(found.appear) == ["2026-03-02T03:30:00", "2026-03-08T03:30:00"]


def test_dropping_days_makes_them_vanish(daily: Ledger, clock: FixedClock) -> None:
    found = diff(daily, clock, rule="FREQ=WEEKLY;BYDAY=MO;BYHOUR=2;BYMINUTE=30")
    assert found.appear == () and found.moves == ()
    assert found.unchanged == 2  # Mondays 2026-03-02 and 2026-03-09 keep their instants
    assert nominals(found.vanish) == [
        "2026-03-03T02:30:00",
        "2026-03-04T02:30:00",
        "2026-03-05T02:30:00",
        "2026-03-06T02:30:00",
        "2026-03-07T02:30:00",
        "2026-03-10T02:30:00",
        "2026-03-11T02:30:00",
    ]


def test_republishing_the_same_rule_changes_nothing(daily: Ledger, clock: FixedClock) -> None:
    found = diff(daily, clock)
    assert found.changes == 0 and found.unchanged == 9


def test_a_new_schedule_only_appears(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.read() as session:
        found = future_diff(session, spec(), clock.now(), timedelta(days=3))
    assert found.new_schedule
    assert nominals(found.appear) == ["2026-03-02T02:30:00", "2026-03-03T02:30:00", "2026-03-04T02:30:00"]
    assert found.vanish == () and found.moves == () and found.untouched == ()


def test_a_later_cutover_keeps_the_runs_before_it(daily: Ledger, clock: FixedClock) -> None:
    found = diff(daily, clock, rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30", cutoverAt="2026-03-05T00:00:00Z")
    assert found.start == utc("2026-03-05T00:00:00Z")
    assert next(m.before.nominal_local for m in found.moves) == "2026-03-05T02:30:00"


def test_it_writes_nothing(daily: Ledger, clock: FixedClock) -> None:
    def counts() -> tuple[int, int]:
        with daily.read() as session:
            return (
                session.scalar(select(func.count()).select_from(Event)) or 0,
                session.scalar(select(func.count()).select_from(Occurrence)) or 0,
            )

    before = counts()
    diff(daily, clock, timeZone="Europe/London")
    assert counts() == before


@given(
    hour=st.integers(min_value=0, max_value=23),
    minute=st.sampled_from([0, 15, 30, 45]),
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "UTC"]),
    gap=st.sampled_from(["SKIP", "SHIFT_FORWARD", "SHIFT_BY_GAP"]),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_occurrence_is_accounted_for_once(
    daily: Ledger, clock: FixedClock, hour: int, minute: int, zone: str, gap: str
) -> None:
    """Old runs are unchanged, moved or vanish; new runs are unchanged, moved or appear; never twice."""
    found = diff(daily, clock, rule=f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}", timeZone=zone, gapPolicy=gap)
    new_spec = spec(revision=2, rule=f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}", timeZone=zone, gapPolicy=gap)
    compiled = compile_schedule(parse_spec(canonical_dict(new_spec, cutover_at=NOW)))
    new_runs = [r for r in expand(compiled, found.start, found.end) if r.runnable]
    assert len(found.moves) + len(found.vanish) + found.unchanged == 9  # 02:30 New York, 2026-03-02..11 but the 8th
    assert len(found.moves) + len(found.appear) + found.unchanged == len(new_runs)
    before = [m.before.occurrence_id for m in found.moves] + [r.occurrence_id for r in found.vanish]
    after = [m.after.occurrence_id for m in found.moves] + [r.occurrence_id for r in found.appear]
    assert len(set(before)) == len(before) and len(set(after)) == len(after)
    for move in found.moves:
        same_wall = (move.before.nominal_local, move.before.fold_ordinal) == (
            move.after.nominal_local,
            move.after.fold_ordinal,
        )
        assert same_wall or move.before.nominal_local[:10] == move.after.nominal_local[:10]


def test_the_diff_says_where_the_schedule_will_run_when_that_changes(ledger: Ledger, clock: FixedClock) -> None:
    from core.team.actor import Actor

    alpha, beta = Actor("alice", "alpha"), Actor("alice", "beta")
    with ledger.read() as session:
        assert future_diff(session, spec(), clock.now(), TEN_DAYS, alpha).runs_on == (None, "engines with host=alpha")
    with ledger.write() as session:
        publish(session, spec(), clock, actor=alpha)

    def runs_on(by: Actor, **overrides: object) -> tuple[str | None, str] | None:
        with ledger.read() as session:
            return future_diff(session, spec(revision=2, **overrides), clock.now(), TEN_DAYS, by).runs_on

    assert runs_on(alpha) is None
    assert runs_on(beta) == ("engines with host=alpha", "engines with host=beta")
    assert runs_on(beta, runsOn={"host": "alpha"}) is None
    assert runs_on(alpha, runsOn={"any": True}) == ("engines with host=alpha", "any engine")
