"""Long outages: occurrences certain to expire are recorded as expired ranges
(docs/contract.md §4, invariant 6; docs/ledger.md "Long outages"). Every test runs on
SQLite and PostgreSQL.

The main table compares two ledgers after the same outage: one where the
engine records expired ranges, and one where every missed occurrence was
materialized row by row first (the reading of invariant 6 without ranges).
They must agree on every occurrence that can still run, and the ranges must
stand for exactly the rows the second ledger expired.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from core import cli
from core.cli.engine_commands import pass_summary
from core.clock import FixedClock
from core.engine.admin import backfill
from core.engine.engine import Engine, EngineOptions, PassReport
from core.ledger.db import Ledger, open_ledger
from core.ledger.events import EventKind
from core.ledger.expired import ExpiredRangeView, expired_totals, list_expired_ranges
from core.ledger.materialize import materialize
from core.ledger.models import Event, ExpiredRange, Occurrence, Schedule
from core.ledger.publish import publish
from core.ledger.queries import list_schedules
from core.ledger.states import BORN_SKIPPED, OccurrenceKind
from core.ledger.states import OccurrenceState as S
from core.render.ledger_table import schedule_json, schedules_table
from core.spec.validation import parse_spec

from . import MINUTELY_UTC, spec_data, utc
from . import engine_stages as stages

SID = "outage"


def _spec(**keys: Any) -> dict[str, Any]:
    task = {"argv": ["/bin/true"], "effect": "idempotent"}
    return spec_data({**MINUTELY_UTC, "scheduleId": SID, "horizon": "PT2H", "task": task}, **keys)


def _publish(ledger: Ledger, spec: dict[str, Any], at: datetime) -> None:
    with ledger.write() as session:
        publish(session, parse_spec(spec), FixedClock(at))


def _states_before(ledger: Ledger, now: datetime) -> dict[str, tuple[S, datetime]]:
    with ledger.read() as session:
        rows = session.execute(
            select(Occurrence.occurrence_id, Occurrence.state, Occurrence.position_utc).where(
                Occurrence.schedule_id == SID, Occurrence.position_utc < now
            )
        ).all()
    return {occ: (state, position) for occ, state, position in rows}


def _row_by_row(tmp_path: Path, spec: dict[str, Any], cutover: datetime, now: datetime) -> dict[str, Any]:
    """The same outage on a ledger where every missed occurrence is materialized one by one."""
    with open_ledger(str(tmp_path / "row-by-row.db"), FixedClock(now)) as truth:
        _publish(truth, spec, cutover)
        clock = FixedClock(now)
        while True:
            with truth.write() as session:
                if not materialize(session, SID, clock).more:
                    break
        stages.promote(Engine(truth, clock), PassReport())
        return _states_before(truth, now)


CASES = [
    pytest.param(
        {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1},
        "2026-02-26T12:00:00Z",
        "2026-03-01T12:00:30Z",
        1,
        id="bounded_1_minutely_utc_three_days",
    ),
    pytest.param(
        {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 3, "timeZone": "America/New_York", "rule": "FREQ=HOURLY"},
        "2026-02-08T12:00:00Z",
        "2026-03-10T12:00:30Z",
        1,
        id="bounded_3_hourly_new_york_across_the_spring_gap",
    ),
    pytest.param(
        {
            "kind": "interval",
            "every": "PT5M",
            "anchor": "2026-01-01T00:00:00Z",
            "rule": None,
            "start": None,
            "gapPolicy": None,
            "foldPolicy": None,
            "misfirePolicy": "SKIP",
            "jitter": "PT2M",
        },
        "2026-02-27T00:00:00Z",
        "2026-03-01T12:00:00Z",
        1,
        id="skip_interval_with_jitter",
    ),
    pytest.param(
        {"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "PT6H", "rule": "FREQ=MINUTELY;INTERVAL=10"},
        "2026-02-20T00:00:00Z",
        "2026-03-01T12:00:00Z",
        1,
        id="catch_up_all_keeps_its_window",
    ),
    pytest.param(
        {"misfirePolicy": "CATCH_UP_ALL", "rule": "FREQ=HOURLY;BYMINUTE=5"},
        "2026-02-20T00:00:00Z",
        "2026-03-01T12:00:00Z",
        0,
        id="catch_up_all_without_window_expires_nothing",
    ),
    pytest.param(
        {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1},
        "2026-03-01T11:00:00Z",
        "2026-03-01T12:00:30Z",
        0,
        id="short_outage_keeps_one_row_each",
    ),
    pytest.param(
        {
            "misfirePolicy": "CATCH_UP_BOUNDED",
            "maxCatchUp": 2,
            "rule": "FREQ=DAILY;BYDAY=MO,WE;BYHOUR=9",
            "start": "2024-01-01T00:00:00",
        },
        "2024-03-01T00:00:00Z",
        "2026-03-01T12:00:00Z",
        1,
        id="bounded_2_twice_weekly_two_years",
    ),
]


@pytest.mark.parametrize(("keys", "cutover", "now", "ranges"), CASES)
def test_ranges_expire_exactly_what_row_by_row_would(
    ledger: Ledger, tmp_path: Path, keys: dict[str, Any], cutover: str, now: str, ranges: int
) -> None:
    spec = _spec(**keys)
    start, end = utc(cutover), utc(now)
    _publish(ledger, spec, start)
    clock = FixedClock(end)
    engine = Engine(ledger, clock)
    report = PassReport()
    stages.materialize(engine, report)
    stages.promote(engine, report)

    found = _states_before(ledger, end)
    truth = _row_by_row(tmp_path, spec, start, end)
    with ledger.read() as session:
        recorded = list_expired_ranges(session, SID)
    assert len(recorded) == ranges
    assert set(found) <= set(truth)
    for occ_id, (state, position) in truth.items():
        if occ_id in found:
            assert found[occ_id][0] is state, occ_id
        else:
            # Only rows that expired (or were never meant to run) stand in a range.
            assert state is S.MISFIRE_EXPIRED or state in BORN_SKIPPED, (occ_id, state)
            assert any(r.from_utc <= position < r.to_utc for r in recorded), (occ_id, position)
    for r in recorded:
        inside = [s for s, p in truth.values() if r.from_utc <= p < r.to_utc]
        assert inside and all(s is S.MISFIRE_EXPIRED or s in BORN_SKIPPED for s in inside)
        if r.occurrences is not None:
            assert r.occurrences == len(inside)
    # Nothing that can still run was left out: the due ones agree.
    assert sorted(o for o, (s, _) in found.items() if s is S.DUE) == sorted(
        o for o, (s, _) in truth.items() if s is S.DUE
    )
    expired_rows = sum(1 for s, _ in found.values() if s is S.MISFIRE_EXPIRED)
    counted = sum(r.occurrences or 0 for r in recorded)
    if all(r.occurrences is not None for r in recorded):
        assert expired_rows + counted == sum(1 for s, _ in truth.values() if s is S.MISFIRE_EXPIRED)
        assert report.expired == expired_rows + counted


def _long_outage(ledger: Ledger) -> tuple[FixedClock, Engine]:
    """Three days of an every-minute schedule missed; maxCatchUp 1."""
    _publish(ledger, _spec(misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=1), utc("2026-02-26T12:00:00Z"))
    clock = FixedClock(utc("2026-03-01T12:00:30Z"))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    return clock, engine


def test_one_range_one_event_and_the_cursor_in_one_transaction(ledger: Ledger) -> None:
    _, engine = _long_outage(ledger)
    report = PassReport()
    stages.materialize(engine, report)
    with ledger.read() as session:
        [r] = list_expired_ranges(session, SID)
        events = [e for e in session.scalars(select(Event).where(Event.kind == EventKind.OCCURRENCES_EXPIRED.value))]
        cursor = session.scalar(select(Schedule.cursor_utc).where(Schedule.id == SID))
        first_row = session.scalar(select(Occurrence.position_utc).order_by(Occurrence.position_utc).limit(1))
        totals = expired_totals(session)
    # 2026-02-26T12:00 up to the newest late minute (12:00, due 15 s before now): 3 days of minutes.
    assert (r.from_utc, r.to_utc, r.occurrences) == (utc("2026-02-26T12:00:00Z"), utc("2026-03-01T12:00:00Z"), 4320)
    assert r.policy == "CATCH_UP_BOUNDED"
    assert r.reason == (
        "missed by more than latenessWindow (PT15S); only the newest run is made up (misfirePolicy CATCH_UP_BOUNDED)"
    )
    assert r.summary().startswith(
        "4,320 occurrences of outage revision 1 from 2026-02-26T12:00:00Z to 2026-03-01T12:00:00Z expired by "
        "misfirePolicy CATCH_UP_BOUNDED (recorded as one range)"
    )
    [event] = events
    assert event.data["fromUtc"] == "2026-02-26T12:00:00Z" and event.data["occurrences"] == 4320
    assert first_row == utc("2026-03-01T12:00:00Z")  # the one made up is a row of its own
    assert cursor is not None and cursor > utc("2026-03-01T12:00:00Z")
    assert (totals.ranges, totals.occurrences, totals.uncounted) == (1, 4320, 0)
    assert (report.expired_ranges, report.expired) == (1, 4320)


def test_a_second_pass_records_nothing_more(ledger: Ledger) -> None:
    clock, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    clock.advance(timedelta(minutes=3))
    again = PassReport()
    stages.materialize(engine, again)
    with ledger.read() as session:
        assert len(list_expired_ranges(session, SID)) == 1
    assert again.expired_ranges == 0


def test_a_backfill_inside_a_range_runs_each_occurrence_once(ledger: Ledger) -> None:
    clock, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    result = backfill(ledger, SID, utc("2026-02-27T08:00:00Z"), utc("2026-02-27T08:03:00Z"), clock, note="audit")
    assert len(result.created) == 3 and result.left == () and result.queued == ()
    with ledger.read() as session:
        made = session.scalars(select(Occurrence).where(Occurrence.kind == OccurrenceKind.BACKFILL)).all()
    assert sorted(o.nominal_local for o in made) == [
        "2026-02-27T08:00:00",
        "2026-02-27T08:01:00",
        "2026-02-27T08:02:00",
    ]
    assert {o.state for o in made} == {S.DUE}
    again = backfill(ledger, SID, utc("2026-02-27T08:00:00Z"), utc("2026-02-27T08:03:00Z"), clock)
    assert again.created == () and len(again.left) == 3


def test_a_first_pass_after_the_outage_runs_only_the_bound(ledger: Ledger) -> None:
    _, engine = _long_outage(ledger)
    report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 1}
    assert (report.expired_ranges, report.expired) == (1, 4320)


def test_schedctl_ledger_shows_the_range(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    _, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    url = ledger.engine.url.render_as_string(hide_password=False)
    base = ["--db", url, "--now", "2026-03-01T12:00:30Z", "--schedule", SID]
    assert cli.main(["ledger", *base, "--state", "MISFIRE_EXPIRED"]) == 0
    text = capsys.readouterr().out
    assert "1 expired range (missed occurrences recorded as one entry each):" in text
    assert "  4,320 occurrences of outage revision 1 from 2026-02-26T12:00:00Z to 2026-03-01T12:00:00Z" in text
    assert cli.main(["ledger", *base, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["expiredRanges"] == [
        {
            "rangeId": document["expiredRanges"][0]["rangeId"],
            "scheduleId": SID,
            "revision": 1,
            "fromUtc": "2026-02-26T12:00:00Z",
            "toUtc": "2026-03-01T12:00:00Z",
            "state": "MISFIRE_EXPIRED",
            "policy": "CATCH_UP_BOUNDED",
            "reason": "missed by more than latenessWindow (PT15S); "
            "only the newest run is made up (misfirePolicy CATCH_UP_BOUNDED)",
            "occurrences": 4320,
        }
    ]
    assert cli.main(["ledger", *base, "--state", "SUCCEEDED"]) == 0
    assert "expired range" not in capsys.readouterr().out


def test_a_range_that_could_not_be_counted_says_every_occurrence() -> None:
    view = ExpiredRangeView(
        1,
        "s",
        2,
        utc("2026-02-08T12:00:00Z"),
        utc("2026-03-10T00:00:00Z"),
        "SKIP",
        "missed by more than latenessWindow (PT15M); misfirePolicy SKIP runs no missed occurrence",
        None,
        utc("2026-03-10T12:00:00Z"),
    )
    assert view.summary() == (
        "every occurrence of s revision 2 from 2026-02-08T12:00:00Z to 2026-03-10T00:00:00Z expired by "
        "misfirePolicy SKIP (recorded as one range): missed by more than latenessWindow (PT15M); "
        "misfirePolicy SKIP runs no missed occurrence"
    )


# --- what the ranges add to counts: metrics, the pass summary, list_schedules -------------


def _scrape(ledger: Ledger, clock: FixedClock) -> dict[str, float]:
    from prometheus_client import generate_latest

    from core.engine.metrics import registry_for

    body = generate_latest(registry_for(ledger, clock)).decode()
    return {line.split(" ")[0]: float(line.split(" ")[1]) for line in body.splitlines() if not line.startswith("#")}


def test_metrics_count_the_occurrences_of_expired_ranges(ledger: Ledger) -> None:
    clock, engine = _long_outage(ledger)
    before = _scrape(ledger, clock)
    assert before["tidemark_expired_ranges"] == 0.0 and before["tidemark_misfires_total"] == 0.0
    stages.materialize(engine, PassReport())
    with ledger.read() as session:
        rows = len(session.scalars(select(Occurrence).where(Occurrence.state == S.MISFIRE_EXPIRED)).all())
    metrics = _scrape(ledger, clock)
    assert metrics["tidemark_expired_ranges"] == 1.0
    assert metrics["tidemark_misfires_total"] == rows + 4320
    assert metrics['tidemark_occurrences{state="MISFIRE_EXPIRED"}'] == rows + 4320


def test_an_uncounted_range_adds_a_range_but_no_occurrences(ledger: Ledger) -> None:
    clock, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    with ledger.write() as session:
        session.execute(ExpiredRange.__table__.update().values(occurrences=None))
    metrics = _scrape(ledger, clock)
    assert metrics["tidemark_expired_ranges"] == 1.0
    assert metrics["tidemark_misfires_total"] < 4320


@pytest.mark.parametrize(
    ("ranges", "expired", "words"),
    [
        pytest.param(0, 3, "expired 3, recovered", id="no_range_no_words"),
        pytest.param(
            1,
            4321,
            "expired 4,321 (of which a long stretch of missed occurrences recorded as 1 expired range), recovered",
            id="one_range",
        ),
        pytest.param(
            2,
            8760,
            "expired 8,760 (of which a long stretch of missed occurrences recorded as 2 expired ranges)",
            id="two_ranges",
        ),
    ],
)
def test_the_pass_summary_names_expired_ranges(ranges: int, expired: int, words: str) -> None:
    report = PassReport(expired=expired, expired_ranges=ranges)
    assert words in pass_summary(report, utc("2026-03-01T12:00:30Z"))


def test_list_schedules_counts_the_occurrences_of_ranges(ledger: Ledger) -> None:
    _, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    with ledger.read() as session:
        rows = len(session.scalars(select(Occurrence).where(Occurrence.state == S.MISFIRE_EXPIRED)).all())
        [summary] = list_schedules(session)
    assert summary.counts[S.MISFIRE_EXPIRED] == rows + 4320
    assert summary.uncounted_ranges == 0
    assert summary.count_text(S.MISFIRE_EXPIRED) == f"{rows + 4320:,}"


def test_list_schedules_says_a_range_when_its_count_is_unknown(ledger: Ledger) -> None:
    _, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    with ledger.write() as session:
        session.execute(ExpiredRange.__table__.update().values(occurrences=None))
    with ledger.read() as session:
        rows = len(session.scalars(select(Occurrence).where(Occurrence.state == S.MISFIRE_EXPIRED)).all())
        [summary] = list_schedules(session)
    assert summary.counts.get(S.MISFIRE_EXPIRED, 0) == rows
    assert summary.uncounted_ranges == 1
    assert summary.count_text(S.MISFIRE_EXPIRED) == f"{rows:,} + a range"
    assert summary.count_text(S.SUCCEEDED) == "0"


def test_schedctl_schedules_shows_a_range_whose_count_is_unknown(ledger: Ledger) -> None:
    _, engine = _long_outage(ledger)
    stages.materialize(engine, PassReport())
    with ledger.write() as session:
        session.execute(ExpiredRange.__table__.update().values(occurrences=None))
    with ledger.read() as session:
        [summary] = list_schedules(session)
    table = schedules_table([summary])
    assert "MISFIRE_EXPIRED" in table and "+ a range" in table
    assert schedule_json(summary)["uncountedRanges"] == 1
