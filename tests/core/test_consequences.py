"""consequences(): what each clock-change policy does at the next gap, fold and
missing date that touch a schedule, read from real zones with a fixed ``now``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import BASE_INTERVAL, DROP, make_data, make_spec, utc
from hypothesis import given, settings
from hypothesis import strategies as st

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind
from core.explain.consequences import Consequences, Outcome, consequences
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import build_preview
from core.recurrence.resolve import candidates
from core.spec.validation import parse_spec
from core.time.zones import get_zone

NOW = utc("2027-03-01T12:00:00Z")


def _at(now: str, **overrides: Any) -> Consequences:
    return consequences(make_spec(**overrides), utc(now))


# --- gaps ------------------------------------------------------------------------------------

GAP_CASES = [
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30"),
        "2027-03-01T12:00:00Z",
        {
            GapPolicy.SKIP: "Next gap: Sun 2027-03-14, 02:30 does not exist; this schedule skips it",
            GapPolicy.SHIFT_FORWARD: "Next gap: Sun 2027-03-14, 02:30 does not exist; "
            "this schedule will run at 03:00 EDT (07:00 UTC)",
            GapPolicy.SHIFT_BY_GAP: "Next gap: Sun 2027-03-14, 02:30 does not exist; "
            "this schedule will run at 03:30 EDT (07:30 UTC)",
        },
        id="new_york_0230",
    ),
    pytest.param(
        dict(timeZone="Australia/Melbourne", rule="FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30", start="2026-01-04"),
        "2027-03-01T12:00:00Z",
        {
            GapPolicy.SKIP: "Next gap: Sun 2027-10-03, 02:30 does not exist; this schedule skips it",
            GapPolicy.SHIFT_FORWARD: "Next gap: Sun 2027-10-03, 02:30 does not exist; "
            "this schedule will run at 03:00 AEDT (2027-10-02 16:00 UTC)",
            GapPolicy.SHIFT_BY_GAP: "Next gap: Sun 2027-10-03, 02:30 does not exist; "
            "this schedule will run at 03:30 AEDT (2027-10-02 16:30 UTC)",
        },
        id="melbourne_weekly_sunday",
    ),
    pytest.param(
        dict(timeZone="Australia/Lord_Howe", rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=15"),
        "2026-06-01T00:00:00Z",
        {
            GapPolicy.SKIP: "Next gap: Sun 2026-10-04, 02:15 does not exist; this schedule skips it",
            GapPolicy.SHIFT_FORWARD: "Next gap: Sun 2026-10-04, 02:15 does not exist; "
            "this schedule will run at 02:30 UTC+11:00 (2026-10-03 15:30 UTC)",
            GapPolicy.SHIFT_BY_GAP: "Next gap: Sun 2026-10-04, 02:15 does not exist; "
            "this schedule will run at 02:45 UTC+11:00 (2026-10-03 15:45 UTC)",
        },
        id="lord_howe_30min_gap",
    ),
    pytest.param(
        dict(timeZone="Pacific/Apia", rule="FREQ=DAILY;BYHOUR=10", start="2011-01-01"),
        "2011-12-01T00:00:00Z",
        {
            GapPolicy.SKIP: "Next gap: Fri 2011-12-30, 10:00 does not exist; this schedule skips it",
            GapPolicy.SHIFT_FORWARD: "Next gap: Fri 2011-12-30, 10:00 does not exist; "
            "this schedule will run at Sat 2011-12-31 00:00 UTC+14:00 (2011-12-30 10:00 UTC)",
            # Read with the old offset, 10:00 lands on the next day's own 10:00, which keeps the instant.
            GapPolicy.SHIFT_BY_GAP: "Next gap: Fri 2011-12-30, 10:00 does not exist; "
            "this schedule drops it, since another run already holds that time",
        },
        id="apia_skipped_day_2011",
    ),
    pytest.param(
        dict(rule="FREQ=MINUTELY;INTERVAL=15"),
        "2027-03-01T12:00:00Z",
        {
            GapPolicy.SKIP: "Next gap: Sun 2027-03-14, 02:00 does not exist (nor 3 more of its times); "
            "this schedule skips it",
            GapPolicy.SHIFT_FORWARD: "Next gap: Sun 2027-03-14, 02:00 does not exist (nor 3 more of its times); "
            "this schedule drops it, since another run already holds that time",
        },
        id="new_york_quarter_hours_collide",
    ),
]


@pytest.mark.parametrize(("overrides", "now", "expected"), GAP_CASES)
def test_gap_lines_per_policy(overrides: dict[str, Any], now: str, expected: dict[GapPolicy, str]) -> None:
    found = _at(now, **overrides)
    assert found.gap is not None and found.gap.affects
    for policy, line in expected.items():
        assert found.gap.line(policy) == line
    # The chosen policy (SKIP in the base document) is the default line.
    assert found.gap.line() == expected[GapPolicy.SKIP]


def test_gap_line_follows_the_chosen_policy_and_carries_instants() -> None:
    found = _at("2027-03-01T12:00:00Z", gapPolicy="SHIFT_FORWARD")
    assert found.gap is not None
    assert found.gap.chosen is GapPolicy.SHIFT_FORWARD
    assert found.gap.line().endswith("will run at 03:00 EDT (07:00 UTC)")
    (run,) = found.gap.outcomes[GapPolicy.SHIFT_FORWARD].runs
    assert run.utc == utc("2027-03-14T07:00:00Z")
    assert run.local == datetime(2027, 3, 14, 3, 0)
    assert found.gap.outcomes[GapPolicy.SKIP].runs == ()


def test_a_gap_that_misses_the_schedule_is_looked_past() -> None:
    # Weekly on Mondays: New York's gaps fall on Sundays, so none touches it.
    found = _at("2027-03-01T12:00:00Z", rule="FREQ=WEEKLY;BYDAY=MO;BYHOUR=2;BYMINUTE=30")
    assert found.gap is not None and not found.gap.affects
    assert found.gap.line() == (
        "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; "
        "none of this schedule's times fall in a gap in the next ten years"
    )


def test_the_next_gap_that_touches_a_monthly_rule_can_be_years_away() -> None:
    # The 8th of each month at 02:30: New York's gap falls on 8 March in 2026 and next in 2037.
    found = _at("2027-03-01T12:00:00Z", rule="FREQ=MONTHLY;BYMONTHDAY=8;BYHOUR=2;BYMINUTE=30")
    assert found.gap is not None and found.gap.affects
    assert found.gap.day.isoformat() == "2037-03-08"


# --- folds -----------------------------------------------------------------------------------

FOLD_CASES = [
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30"),
        "2026-10-01T00:00:00Z",
        {
            FoldPolicy.FIRST_ONLY: "Next repeat: Sun 2026-11-01, 01:30 happens twice; runs once, at 01:30 EDT "
            "(05:30 UTC)",
            FoldPolicy.SECOND_ONLY: "Next repeat: Sun 2026-11-01, 01:30 happens twice; runs once, at 01:30 EST "
            "(06:30 UTC)",
            FoldPolicy.BOTH: "Next repeat: Sun 2026-11-01, 01:30 happens twice; runs twice, at 01:30 EDT "
            "(05:30 UTC) and 01:30 EST (06:30 UTC)",
        },
        id="new_york_0130",
    ),
    pytest.param(
        dict(timeZone="Australia/Lord_Howe", rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=45"),
        "2026-01-01T00:00:00Z",
        {
            FoldPolicy.FIRST_ONLY: "Next repeat: Sun 2026-04-05, 01:45 happens twice; runs once, at 01:45 UTC+11:00 "
            "(2026-04-04 14:45 UTC)",
            FoldPolicy.SECOND_ONLY: "Next repeat: Sun 2026-04-05, 01:45 happens twice; runs once, at 01:45 "
            "UTC+10:30 (2026-04-04 15:15 UTC)",
        },
        id="lord_howe_30min_fold",
    ),
    pytest.param(
        dict(timeZone="Australia/Melbourne", rule="FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30", start="2026-01-04"),
        "2027-03-01T12:00:00Z",
        {
            FoldPolicy.FIRST_ONLY: "Next repeat: Sun 2027-04-04, 02:30 happens twice; runs once, at 02:30 AEDT "
            "(2027-04-03 15:30 UTC)",
            FoldPolicy.SECOND_ONLY: "Next repeat: Sun 2027-04-04, 02:30 happens twice; runs once, at 02:30 AEST "
            "(2027-04-03 16:30 UTC)",
        },
        id="melbourne_fold",
    ),
]


@pytest.mark.parametrize(("overrides", "now", "expected"), FOLD_CASES)
def test_fold_lines_per_policy(overrides: dict[str, Any], now: str, expected: dict[FoldPolicy, str]) -> None:
    found = _at(now, **overrides)
    assert found.fold is not None and found.fold.affects
    for policy, line in expected.items():
        assert found.fold.line(policy) == line
    assert len(found.fold.outcomes[FoldPolicy.BOTH].runs) == 2


def test_new_york_0230_is_never_repeated() -> None:
    found = _at("2027-03-01T12:00:00Z")
    assert found.fold is not None and not found.fold.affects
    assert "none of this schedule's times happen twice" in found.fold.line()


# --- dates a month lacks ---------------------------------------------------------------------

INVALID_CASES = [
    pytest.param(
        dict(timeZone="Europe/London", rule="FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18;BYMINUTE=0"),
        "2027-01-05T00:00:00Z",
        "2027-02-31",
        {
            InvalidDatePolicy.OMIT: "Next missing date: 2027-02-31 does not exist; no run takes its place; "
            "the next run is Wed 2027-03-31 18:00 BST (17:00 UTC)",
            InvalidDatePolicy.BACKWARD: "Next missing date: 2027-02-31 does not exist; "
            "runs Sun 2027-02-28 18:00 GMT (18:00 UTC)",
            InvalidDatePolicy.FORWARD: "Next missing date: 2027-02-31 does not exist; "
            "runs Mon 2027-03-01 18:00 GMT (18:00 UTC)",
        },
        id="london_day_31_february",
    ),
    pytest.param(
        dict(timeZone="Europe/London", rule="FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18;BYMINUTE=0"),
        "2027-03-05T00:00:00Z",
        "2027-04-31",
        {
            InvalidDatePolicy.BACKWARD: "Next missing date: 2027-04-31 does not exist; "
            "runs Fri 2027-04-30 18:00 BST (17:00 UTC)",
        },
        id="london_day_31_april_summer_time",
    ),
    pytest.param(
        dict(timeZone="Europe/London", rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9"),
        "2027-01-05T00:00:00Z",
        "2027-02-29",
        {
            InvalidDatePolicy.FORWARD: "Next missing date: 2027-02-29 does not exist; "
            "runs Mon 2027-03-01 09:00 GMT (09:00 UTC)",
        },
        id="leap_day_in_a_common_year",
    ),
]


@pytest.mark.parametrize(("overrides", "now", "missing", "expected"), INVALID_CASES)
def test_invalid_date_lines(
    overrides: dict[str, Any], now: str, missing: str, expected: dict[InvalidDatePolicy, str]
) -> None:
    found = _at(now, **overrides)
    assert found.invalid_date is not None
    assert found.invalid_date.missing == missing
    for policy, line in expected.items():
        assert found.invalid_date.line(policy) == line
    assert found.invalid_date.outcomes[InvalidDatePolicy.OMIT].runs == ()


def test_rules_that_only_name_real_dates_have_no_missing_date() -> None:
    assert _at("2027-01-05T00:00:00Z").invalid_date is None
    assert _at("2027-01-05T00:00:00Z", rule="FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=9").invalid_date is None


# --- where the topic does not apply ----------------------------------------------------------


def test_zone_without_clock_changes_says_so() -> None:
    found = _at("2027-03-01T12:00:00Z", timeZone="America/Phoenix")
    assert found.gap is None and found.fold is None
    assert found.note == "America/Phoenix has no clock changes ahead, so no wall time is ever skipped or repeated."


def test_interval_schedules_are_blind_to_the_wall_clock() -> None:
    found = consequences(parse_spec(make_data(BASE_INTERVAL)), NOW)
    assert found.kind is Kind.INTERVAL
    assert (found.gap, found.fold, found.invalid_date) == (None, None, None)
    assert found.note is not None and "elapsed time" in found.note


@pytest.mark.parametrize(
    ("start", "gap", "fold", "word"),
    [
        pytest.param("2027-03-14T02:30:00", True, False, "will run at 03:00 EDT", id="first_run_in_gap"),
        pytest.param("2026-11-01T01:30:00", False, True, "runs once, at 01:30 EDT", id="first_run_in_fold"),
        pytest.param("2027-03-15T09:00:00", False, False, None, id="first_run_plain"),
    ],
)
def test_after_completion_only_its_first_run_reads_the_wall_clock(
    start: str, gap: bool, fold: bool, word: str | None
) -> None:
    data = make_data(kind="after_completion", delay="PT24H", start=start, gapPolicy="SHIFT_FORWARD", rule=DROP)
    found = consequences(parse_spec(data), utc("2026-06-01T00:00:00Z"))
    assert (found.gap is not None, found.fold is not None) == (gap, fold)
    lines = [part.line() for part in (found.gap, found.fold) if part is not None]
    if word is None:
        assert found.note is not None and "exists exactly once" in found.note
    else:
        assert word in lines[0]


# --- properties ------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    hour=st.integers(0, 23),
    minute=st.sampled_from([0, 15, 30, 45]),
    day=st.integers(0, 400),
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Lord_Howe", "Europe/Berlin"]),
)
def test_gap_outcomes_land_after_the_gap_and_fold_runs_in_order(hour: int, minute: int, day: int, zone: str) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)
    found = consequences(make_spec(timeZone=zone, rule=f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}"), now)
    if found.gap is not None and found.gap.affects:
        tr = found.gap.transition
        assert found.gap.outcomes[GapPolicy.SKIP].runs == ()
        for run in found.gap.outcomes[GapPolicy.SHIFT_FORWARD].runs + found.gap.outcomes[GapPolicy.SHIFT_BY_GAP].runs:
            assert run.utc >= tr.utc
            assert run.local >= tr.local_after
    if found.fold is not None and found.fold.affects:
        first, second = found.fold.outcomes[FoldPolicy.BOTH].runs
        assert first.utc < second.utc and first.local == second.local
        assert found.fold.outcomes[FoldPolicy.FIRST_ONLY].runs == (first,)
        assert found.fold.outcomes[FoldPolicy.SECOND_ONLY].runs == (second,)


# --- every consequence names a row of the preview built with its choice -----------------------

#: Which spec key and which part of :class:`Consequences` each policy value belongs to.
_KEYS = {
    **{p.value: ("gapPolicy", "gap", GapPolicy) for p in GapPolicy},
    **{p.value: ("foldPolicy", "fold", FoldPolicy) for p in FoldPolicy},
    **{p.value: ("invalidDatePolicy", "invalid_date", InvalidDatePolicy) for p in InvalidDatePolicy},
}
_NONE = {"SKIP": None, "SHIFT_FORWARD": None, "SHIFT_BY_GAP": None, "FIRST_ONLY": None, "SECOND_ONLY": None}
_NONE_ALL = _NONE | {"BOTH": None}
MONTHLY_31 = "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0"

#: (spec overrides, now, {policy: (date of the row its line names, the missing date it names) or None}).
#: For OMIT the row is the run that follows the date it leaves out. Written out by hand.
AGREEMENT = [
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30"),
        "2027-03-01T12:00:00Z",
        {
            "SKIP": ("2027-03-14", None),
            "SHIFT_FORWARD": ("2027-03-14", None),
            "SHIFT_BY_GAP": ("2027-03-14", None),
            "FIRST_ONLY": None,
            "SECOND_ONLY": None,
            "BOTH": None,
        },
        id="new_york_spring_gap_0230",
    ),
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30"),
        # 07:15Z: the clocks jumped at 07:00Z. SHIFT_FORWARD's run was at 07:00Z (past), the others' rows at 07:30Z.
        "2027-03-14T07:15:00Z",
        {"SKIP": ("2027-03-14", None), "SHIFT_FORWARD": ("2028-03-12", None), "SHIFT_BY_GAP": ("2027-03-14", None)},
        id="new_york_inside_the_gap",
    ),
    pytest.param(
        dict(timeZone="Australia/Lord_Howe", rule="FREQ=DAILY;BYHOUR=1,2;BYMINUTE=15,45"),
        "2026-01-01T00:00:00Z",
        {
            "SKIP": ("2026-10-04", None),
            "SHIFT_FORWARD": ("2026-10-04", None),
            "SHIFT_BY_GAP": ("2026-10-04", None),
            "FIRST_ONLY": ("2026-04-05", None),
            "SECOND_ONLY": ("2026-04-05", None),
            "BOTH": ("2026-04-05", None),
        },
        id="lord_howe_30min_gap_and_fold",
    ),
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30"),
        "2026-10-01T00:00:00Z",
        {
            "SKIP": None,
            "SHIFT_FORWARD": None,
            "SHIFT_BY_GAP": None,
            "FIRST_ONLY": ("2026-11-01", None),
            "SECOND_ONLY": ("2026-11-01", None),
            "BOTH": ("2026-11-01", None),
        },
        id="new_york_fold_0130",
    ),
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30"),
        # Between the two readings: only the second is still ahead.
        "2026-11-01T06:00:00Z",
        {"FIRST_ONLY": ("2026-11-01", None), "SECOND_ONLY": ("2026-11-01", None), "BOTH": ("2026-11-01", None)},
        id="new_york_between_the_readings",
    ),
    pytest.param(
        dict(timeZone="Pacific/Apia", rule="FREQ=DAILY;BYHOUR=10", start="2011-01-01"),
        "2011-12-01T00:00:00Z",
        {
            "SKIP": ("2011-12-30", None),
            "SHIFT_FORWARD": ("2011-12-30", None),
            "SHIFT_BY_GAP": ("2011-12-30", None),
            "FIRST_ONLY": None,
            "BOTH": None,
        },
        id="apia_skipped_day_2011",
    ),
    pytest.param(
        dict(rule=MONTHLY_31),
        # The issue's case: 2026-11-30 after 09:00 EST. BACKWARD's 2026-11-30 run is past.
        "2026-11-30T15:00:00Z",
        {
            "OMIT": ("2026-12-31", "2026-11-31"),
            "BACKWARD": ("2027-02-28", "2027-02-31"),
            "FORWARD": ("2026-12-01", "2026-11-31"),
        }
        | _NONE_ALL,
        id="day_31_after_the_days_run",
    ),
    pytest.param(
        dict(rule=MONTHLY_31),
        "2026-11-30T13:00:00Z",
        {
            "OMIT": ("2026-12-31", "2026-11-31"),
            "BACKWARD": ("2026-11-30", "2026-11-31"),
            "FORWARD": ("2026-12-01", "2026-11-31"),
        },
        id="day_31_before_the_days_run",
    ),
    pytest.param(
        dict(rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=12", start="2024-01-01T00:00:00"),
        "2027-01-05T00:00:00Z",
        {
            "OMIT": ("2028-02-29", "2027-02-29"),
            "BACKWARD": ("2027-02-28", "2027-02-29"),
            "FORWARD": ("2027-03-01", "2027-02-29"),
        },
        id="february_29_yearly",
    ),
    pytest.param(
        dict(rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0"), "2027-03-01T12:00:00Z", _NONE_ALL, id="never_meets_a_change"
    ),
]


def _touched(value: str, row: Occurrence, zone: str) -> bool:
    """Whether ``value``'s kind of policy has anything to decide for ``row``: told from the zone and the rule."""
    kind = _KEYS[value][1]
    if kind == "gap":
        return not candidates(get_zone(zone), row.nominal)
    if kind == "fold":
        return len(candidates(get_zone(zone), row.nominal)) == 2
    return row.nominal.day not in (29, 31)  # the table's rules name day 29 or day 31 only


def _named_rows(outcome: Outcome) -> list[Occurrence]:
    return [*outcome.rows, *([outcome.following] if outcome.following is not None else [])]


def _dates_of(rows: list[Occurrence]) -> set[str]:
    found = set()
    for row in rows:
        found.add(row.nominal.date().isoformat())
        if row.resolved is not None and row.resolved_local is not None:
            found |= {row.resolved.date().isoformat(), row.resolved_local.date().isoformat()}
    return found


@pytest.mark.parametrize(("overrides", "now", "expected"), AGREEMENT)
def test_each_choice_names_a_row_of_the_preview_built_with_it(
    overrides: dict[str, Any], now: str, expected: dict[str, tuple[str, str | None] | None]
) -> None:
    at = utc(now)
    zone = overrides.get("timeZone", "America/New_York")
    base = consequences(make_spec(**overrides), at)
    for value, named in expected.items():
        key, attribute, enum = _KEYS[value]
        spec = make_spec(**overrides, **{key: value})
        chosen = getattr(consequences(spec, at), attribute)
        offered = getattr(base, attribute)  # the same choice, offered beside another one
        outcomes = [part.outcomes.get(enum(value)) if part is not None else None for part in (chosen, offered)]
        if named is None:
            assert outcomes == [None, None], value
            continue
        day, missing = named
        outcome = outcomes[0]
        assert outcome is not None, value
        assert outcomes[1] == outcome, value  # substituted or chosen: one answer
        rows = _named_rows(outcome)
        first = outcome.following if outcome.following is not None else outcome.rows[0]
        assert first.nominal.date().isoformat() == day, value
        preview = build_preview(spec, at, until=max(r.position for r in rows) + timedelta(seconds=1)).rows
        for row in rows:
            assert row in preview, value  # the preview's own row, field for field
            assert row.position >= at, value
        if outcome.following is None:
            # Nothing this choice decides comes earlier in the preview.
            earlier = [r for r in preview if r.position < first.position]
            assert not any(_touched(value, r, zone) for r in earlier), value
            assert _touched(value, first, zone), value
        assert outcome.missing == missing, value
        assert {(run.utc, run.local) for run in outcome.runs} == {
            (r.resolved, r.resolved_local) for r in outcome.rows if r.runnable
        }
        # The words name those rows' dates (and the missing date as one that does not exist), nothing else.
        line = chosen.line()
        assert line == offered.line(value)
        named_dates = set(re.findall(r"\d{4}-\d{2}-\d{2}", line))
        assert named_dates <= _dates_of(rows) | ({missing} if missing else set()), (value, line)
        assert day in named_dates, (value, line)
        if missing is not None:
            assert f"{missing} does not exist" in line


def test_the_issues_month_end_case_names_no_past_or_impossible_run() -> None:
    # 2026-11-30 after 09:00 EST, on day 31 of every month.
    at = utc("2026-11-30T15:00:00Z")
    found = consequences(make_spec(rule=MONTHLY_31, invalidDatePolicy="FORWARD"), at)
    assert found.invalid_date is not None
    assert found.invalid_date.line() == (
        "Next missing date: 2026-11-31 does not exist; runs Tue 2026-12-01 09:00 EST (14:00 UTC)"
    )
    assert found.invalid_date.line("BACKWARD") == (
        "Next missing date: 2027-02-31 does not exist; runs Sun 2027-02-28 09:00 EST (14:00 UTC)"
    )
    assert found.invalid_date.line("OMIT") == (
        "Next missing date: 2026-11-31 does not exist; no run takes its place; "
        "the next run is Thu 2026-12-31 09:00 EST (14:00 UTC)"
    )
    preview = build_preview(make_spec(rule=MONTHLY_31, invalidDatePolicy="FORWARD"), at, count=1).rows
    assert found.invalid_date.outcomes[InvalidDatePolicy.FORWARD].rows == (preview[0],)


@settings(max_examples=30, deadline=None)
@given(
    hour=st.integers(0, 23),
    minute=st.sampled_from([0, 15, 30, 45]),
    minutes=st.integers(0, 2 * 366 * 24 * 60),
    zone=st.sampled_from(["America/New_York", "Australia/Lord_Howe", "Europe/Berlin", "America/Santiago"]),
    policy=st.sampled_from([*GapPolicy, *FoldPolicy]),
)
def test_a_named_row_is_the_first_row_its_choice_decides(
    hour: int, minute: int, minutes: int, zone: str, policy: GapPolicy | FoldPolicy
) -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
    key, attribute, _ = _KEYS[policy.value]
    spec = make_spec(timeZone=zone, rule=f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}", **{key: policy.value})
    part = getattr(consequences(spec, at), attribute)
    outcome = part.outcome if part is not None else None
    if outcome is None:
        return
    preview = build_preview(spec, at, until=outcome.rows[-1].position + timedelta(seconds=1)).rows
    assert all(row in preview and row.position >= at for row in outcome.rows)
    earlier = [r for r in preview if r.position < outcome.rows[0].position]
    assert not any(_touched(policy.value, r, zone) for r in earlier)
