"""Shadow (core.ledger.shadow): the installed code and tz database recompute the
materialized future and compare it with the ledger, writing nothing. Equal on an
unchanged ledger of every kind of schedule; exactly the changed occurrences when a
new tz release or a new rule text would compute otherwise."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event, update
from tzdata_change import NEW_RELEASE, install_tzdata, new_york_a_week_late

from core.clock import FixedClock
from core.ledger import Ledger
from core.ledger.materialize import materialize_all, yielded_to
from core.ledger.models import Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.shadow import shadow
from core.ledger.states import OccurrenceState

from . import NOW, occurrences, spec, utc
from .test_zone_change_periods import NEW_YORK, PARIS, hours, live

S = OccurrenceState
SID = "daily-ops-summary"
#: Between Paris's 09:00 (08:00Z) and New York's (14:00Z) on 2027-01-15.
CUT = "2027-01-15T10:00:00Z"

#: A ledger of many kinds: a DST gap (New York, 03-08), a fold (Sydney, 04-05), business
#: periods, exclusions, a COUNT that ends inside the horizon, an interval, and a second
#: revision whose cutover lies ahead.
KINDS: list[dict[str, Any]] = [
    {"horizon": "P14D"},
    {
        "scheduleId": "sydney-fold",
        "timeZone": "Australia/Sydney",
        "foldPolicy": "BOTH",
        "gapPolicy": "SHIFT_FORWARD",
        "horizon": "P40D",
    },
    {
        "scheduleId": "paris-periods",
        "timeZone": "Europe/Paris",
        "rule": "FREQ=HOURLY;BYHOUR=9,10;BYMINUTE=0",
        "businessPeriod": "{nominal:%Y-%m-%d}",
    },
    {"scheduleId": "with-exclusions", "exclude": ["2026-03-05", "2026-03-09"]},
    {"scheduleId": "counted", "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=68"},
    {
        "scheduleId": "every-seven-hours",
        "kind": "interval",
        "every": "PT7H",
        "anchor": "2026-01-01T00:00:00Z",
        "rule": None,
        "start": None,
        "gapPolicy": None,
        "foldPolicy": None,
    },
]


def _publish_kinds(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        for overrides in KINDS:
            publish(session, spec(**overrides), clock, check_task=False)
    with ledger.write() as session:
        materialize_all(session, clock)
    with ledger.write() as session:
        publish(
            session,
            spec(revision=2, rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30", cutoverAt="2026-03-05T00:00:00Z"),
            clock,
            check_task=False,
        )
    with ledger.write() as session:
        materialize_all(session, clock)


@pytest.fixture
def writes() -> Iterator[list[str]]:
    """Every statement that writes, on any database, while the test runs."""
    seen: list[str] = []

    def listen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP"):
            seen.append(statement)

    event.listen(Engine, "before_cursor_execute", listen)
    yield seen
    event.remove(Engine, "before_cursor_execute", listen)


def test_an_unchanged_ledger_of_every_kind_is_equal_and_nothing_is_written(
    ledger: Ledger, clock: FixedClock, writes: list[str]
) -> None:
    _publish_kinds(ledger, clock)
    with ledger.read() as session:
        states = {o.state for o in occurrences(session)}
        assert any(o.fold_ordinal == 1 and o.state is S.PLANNED for o in occurrences(session, "sydney-fold"))
    # The kinds made what they are for: a gap, a fold's second, duplicates, exclusions, cancellations.
    assert {S.SKIPPED_GAP, S.EXCLUDED, S.SKIPPED_DUPLICATE, S.CANCELLED, S.PLANNED} <= states
    clock.set(NOW + timedelta(hours=20))
    writes.clear()
    with ledger.read() as session:
        report = shadow(session, clock)
    assert writes == []
    assert report.equal, report.differences
    assert [s.schedule_id for s in report.schedules] == sorted(
        [SID, "sydney-fold", "paris-periods", "with-exclusions", "counted", "every-seven-hours"]
    )
    assert all(s.compared > 0 for s in report.schedules)
    assert sum(s.compared for s in report.schedules) > 100
    # --days narrows the window; never past the cursor.
    with ledger.read() as session:
        narrow = shadow(session, clock, days=2)
    assert narrow.equal and all(s.end <= clock.now() + timedelta(days=2) for s in narrow.schedules)
    assert writes == []


def test_a_zone_that_moves_its_change_lists_exactly_the_moved_occurrences(
    ledger: Ledger,
    clock: FixedClock,
    writes: list[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    with ledger.write() as session:
        publish(session, spec(horizon="P16D"), clock, check_task=False)
        publish(session, spec(scheduleId="paris", timeZone="Europe/Paris"), clock, check_task=False)
    with ledger.write() as session:
        materialize_all(session, clock)
    with ledger.read() as session:
        ids = {o.nominal_local[:10]: o.occurrence_id for o in occurrences(session, SID)}
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    writes.clear()
    with ledger.read() as session:
        report = shadow(session, clock)
    assert writes == []
    assert report.tzdb_version == NEW_RELEASE and not report.equal
    found = [(d.schedule_id, d.occurrence_id, d.what, d.ledger, d.recomputed) for d in report.differences]
    # 03-08: no gap any more (EST); 03-09..03-14: EST, an hour later; 03-15: the new gap.
    expected: list[tuple[str, str, str, str | None, str | None]] = [
        (SID, ids["2026-03-08"], "resolvedUtc", None, "2026-03-08T07:30:00Z"),
        (SID, ids["2026-03-08"], "state", "SKIPPED_GAP", "PLANNED"),
        (SID, ids["2026-03-08"], "reason", _reason(ledger, ids["2026-03-08"]), None),
    ]
    for day in range(9, 15):
        expected += [
            (SID, ids[f"2026-03-{day:02d}"], what, f"2026-03-{day:02d}T06:30:00Z", f"2026-03-{day:02d}T07:30:00Z")
            for what in ("resolvedUtc", "positionUtc")
        ]
    gap = ids["2026-03-15"]
    expected += [
        (SID, gap, "resolvedUtc", "2026-03-15T06:30:00Z", None),
        (SID, gap, "positionUtc", "2026-03-15T06:30:00Z", "2026-03-15T07:30:00Z"),
        (SID, gap, "state", "PLANNED", "SKIPPED_GAP"),
        (
            SID,
            gap,
            "reason",
            None,
            "02:30 does not exist on 2026-03-15 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT",
        ),
    ]
    assert found == expected
    assert all(d.schedule_id == SID for d in report.differences)  # Paris is untouched


def _reason(ledger: Ledger, occurrence_id: str) -> str | None:
    with ledger.read() as session:
        return next(o.reason for o in occurrences(session) if o.occurrence_id == occurrence_id)


def test_a_new_reason_text_is_a_difference_of_reason_only(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock, check_task=False)
        materialize_all(session, clock)
    materialize_module = sys.modules["core.ledger.materialize"]  # core.ledger's name is the function
    real = materialize_module.iter_rows

    def reworded(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for row in real(*args, **kwargs):
            if row.reason is not None:
                row.reason = row.reason.replace("does not exist", "is never on the clock")
            yield row

    monkeypatch.setattr(materialize_module, "iter_rows", reworded)
    with ledger.read() as session:
        report = shadow(session, clock)
        gap = next(o for o in occurrences(session) if o.state is S.SKIPPED_GAP)
    assert [(d.occurrence_id, d.what) for d in report.differences] == [(gap.occurrence_id, "reason")]
    [difference] = report.differences
    assert difference.ledger == gap.reason
    assert difference.recomputed == (gap.reason or "").replace("does not exist", "is never on the clock")
    assert utc("2026-03-08T00:00:00Z") < gap.position_utc


@pytest.mark.parametrize("cutover", ["2027-01-15T06:00:00Z", "2027-01-15T10:00:00Z", "2027-01-15T15:00:00Z"])
def test_a_zone_change_that_carries_a_period_is_equal_after_it(
    ledger: Ledger, clock: FixedClock, writes: list[str], cutover: str
) -> None:
    """Business periods carried across a move (core.ledger.period_carry), and the
    duplicates that yield to them, are what the materializer makes again."""
    clock.set(utc("2027-01-14T00:00:00Z"))
    passes = hours("2027-01-14T00:00:00Z", "2027-01-15T16:00:00Z")
    live(ledger, clock, passes, (NEW_YORK, PARIS, utc(cutover)), False)
    writes.clear()
    with ledger.read() as session:
        report = shadow(session, clock)
    assert writes == [] and report.equal, report.differences
    assert report.schedules[0].compared > 0


def test_a_duplicate_whose_holder_gave_the_period_back_is_no_difference(
    ledger: Ledger, clock: FixedClock, writes: list[str]
) -> None:
    """Paris to New York between both 09:00s: New York's 14:00Z row yields the day to Paris's
    08:00Z run. If that run then gives the day back (it failed), materializing now would not
    yield; the ledger's row was right when made. A fact changed, not the code."""
    clock.set(utc("2027-01-14T00:00:00Z"))
    live(ledger, clock, hours("2027-01-14T00:00:00Z", "2027-01-15T11:00:00Z"), (PARIS, NEW_YORK, utc(CUT)), False)
    with ledger.read() as session:
        [duplicate] = [
            o
            for o in occurrences(session)
            if o.state is S.SKIPPED_DUPLICATE and o.business_period == "2027-01-15" and o.revision == 2
        ]
        holder = yielded_to(duplicate.reason)
    assert holder is not None
    with ledger.read() as session:
        assert shadow(session, clock).equal
    with ledger.write() as session:
        session.execute(update(Occurrence).where(Occurrence.occurrence_id == holder).values(state=S.FAILED))
    writes.clear()
    with ledger.read() as session:
        report = shadow(session, clock)
    assert writes == [] and report.equal, report.differences


def test_a_revision_this_tidemark_cannot_read_is_not_compared_and_not_equal(
    ledger: Ledger, clock: FixedClock, capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock, check_task=False)
        publish(session, spec(scheduleId="spoiled"), clock, check_task=False)
        materialize_all(session, clock)
    with ledger.write() as session:
        session.execute(update(Revision).where(Revision.schedule_id == "spoiled").values(spec_json=""))
    with ledger.read() as session:
        report = shadow(session, clock)
    assert report.differences == [] and not report.equal
    assert [(s.schedule_id, s.skipped, s.unreadable is not None) for s in report.schedules] == [
        (SID, None, False),
        ("spoiled", "a revision cannot be read", True),
    ]
    from core import cli

    assert cli.main(["shadow", "--db", ledger_url, "--now", "2026-03-01T12:00:00Z"]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("different: 0 differences in 1 schedule (2 schedules, 14 future occurrences compared")
    assert lines[1].startswith("not compared: spoiled: a revision this Tidemark cannot read (")
