"""explain() and summarize(): one short sentence, one sentence per policy, and the
paragraph they make together; computed from the zone data and the expansion."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from helpers import BASE_INTERVAL, DROP, make_data, utc

from core.explain.consequences import consequences
from core.explain.summary import explain, summarize
from core.recurrence.preview import build_preview
from core.spec.files import load_spec
from core.spec.validation import parse_spec

NOW = utc("2026-06-01T00:00:00Z")


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        pytest.param(
            "daily-ops-summary",
            [
                "Every day at 02:30 in America/New_York.",
                "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist that day "
                "and this schedule skips it (gapPolicy SKIP).",
                "Next fold: Sun 2026-11-01, clocks fall back from 02:00 EDT to 01:00 EST; "
                "this schedule's times are not affected.",
                "(misfirePolicy CATCH_UP_BOUNDED, maxCatchUp 1)",
                "(overlapPolicy SKIP)",
            ],
            id="new_york_skip_2027",
        ),
        pytest.param(
            "mel-sync",
            [
                "Every Sunday at 02:30 in Australia/Melbourne.",
                "Next gap: Sun 2026-10-04, clocks jump from 02:00 AEST to 03:00 AEDT; 02:30 does not exist that day "
                "and this schedule runs it at 03:00 AEDT instead (gapPolicy SHIFT_FORWARD).",
                "Next fold: Sun 2027-04-04, clocks fall back from 03:00 AEDT to 02:00 AEST; 02:30 happens twice "
                "and this schedule runs at the first reading only (AEDT) (foldPolicy FIRST_ONLY).",
            ],
            id="melbourne_shift_and_first_only",
        ),
        pytest.param(
            "invoice-month-end",
            [
                "On day 31 of every month at 18:00 in Europe/London.",
                "Next gap: Sun 2027-03-28, clocks jump from 01:00 GMT to 02:00 BST; "
                "this schedule's times are not affected.",
                "Dates that do not exist move back to the last day of the month: 2026-06-31 runs on 2026-06-30 "
                "(invalidDatePolicy BACKWARD).",
            ],
            id="invoice_day_31_backward",
        ),
        pytest.param(
            "interval-15min",
            [
                "Every 15 minutes of elapsed time from 2026-01-01T00:00:00Z, shown on the wall clock of "
                "America/Chicago. Clock changes do not move it:",
                "at the next gap (Sun 2027-03-14, clocks jump from 02:00 CST to 03:00 CDT) the run at 01:45 CST "
                "is followed 15 minutes later by the one at 03:00 CDT on the wall clock;",
                "at the next fold (Sun 2026-11-01, clocks fall back from 02:00 CDT to 01:00 CST) the runs at "
                "01:00, 01:15, 01:30 and 01:45 CST repeat wall times already shown in CDT",
                "(misfirePolicy SKIP)",
            ],
            id="interval_elapsed_time",
        ),
        pytest.param(
            "hourly-fallback",
            [
                "Every hour at :15 in Europe/Berlin.",
                "02:15 does not exist that day and this schedule skips it (gapPolicy SKIP).",
                "Next fold: Sun 2026-10-25, clocks fall back from 03:00 CEST to 02:00 CET; 02:15 happens twice and "
                "this schedule runs at both readings (CEST, then CET 1 h later) (foldPolicy BOTH).",
            ],
            id="berlin_hourly_both",
        ),
    ],
)
def test_demo_specs(demo: Callable[[str], str], stem: str, expected: list[str]) -> None:
    text = explain(load_spec(demo(stem)), NOW)
    for sentence in expected:
        assert sentence in text
    assert "\n" not in text


def _explain(**overrides: Any) -> str:
    return explain(parse_spec(make_data(**overrides)), NOW)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param(
            {"timeZone": "Australia/Brisbane"},
            "Australia/Brisbane has no clock changes ahead",
            id="brisbane_no_changes",
        ),
        pytest.param({"timeZone": "UTC"}, "UTC has no clock changes ahead", id="utc_no_changes"),
        pytest.param(
            {"timeZone": "Australia/Lord_Howe", "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=15", "gapPolicy": "SHIFT_BY_GAP"},
            "Next gap: Sun 2026-10-04, clocks jump from 02:00 UTC+10:30 to 02:30 UTC+11:00; 02:15 does not exist "
            "that day and this schedule runs it at 02:45 UTC+11:00 instead (gapPolicy SHIFT_BY_GAP).",
            id="lord_howe_30min_gap",
        ),
        pytest.param(
            {"timeZone": "America/Santiago", "rule": "FREQ=DAILY;BYHOUR=0;BYMINUTE=30", "gapPolicy": "SHIFT_FORWARD"},
            "Next gap: Sun 2026-09-06, clocks jump from 00:00 UTC-04:00 to 01:00 UTC-03:00; 00:30 does not exist "
            "that day and this schedule runs it at 01:00 UTC-03:00 instead (gapPolicy SHIFT_FORWARD).",
            id="santiago_midnight_gap",
        ),
        pytest.param(
            {"timeZone": "America/Santiago", "rule": "FREQ=DAILY;BYHOUR=23;BYMINUTE=30"},
            "Next fold: Sat 2027-04-03, clocks fall back from Sun 2027-04-04 00:00 UTC-03:00 to 23:00 UTC-04:00; "
            "23:30 happens twice and this schedule runs at the first reading only",
            id="santiago_fold_before_midnight",
        ),
        pytest.param(
            {"rule": "FREQ=HOURLY;BYMINUTE=0", "gapPolicy": "SHIFT_FORWARD", "foldPolicy": "BOTH"},
            "02:00 does not exist that day and this schedule drops it, since another run already holds that "
            "instant (gapPolicy SHIFT_FORWARD)",
            id="hourly_shift_collides",
        ),
        pytest.param(
            {"rule": "FREQ=MINUTELY;INTERVAL=15", "foldPolicy": "SECOND_ONLY"},
            "01:00, 01:15, 01:30 and 01:45 happen twice and this schedule runs at the second reading only (EST) "
            "(foldPolicy SECOND_ONLY)",
            id="quarter_hours_second_only",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "BOTH", "businessPeriod": "{nominal:%Y-%m-%d}"},
            "01:30 happens twice and this schedule runs at the first reading only (EDT), because the second "
            "reading is dropped as a duplicate (foldPolicy BOTH)",
            id="business_period_keeps_one_reading",
        ),
        pytest.param(
            {"exclude": ["2027-03-14"]},
            "02:30 does not exist that day and this schedule leaves it out, as listed in exclude (gapPolicy SKIP)",
            id="gap_day_excluded",
        ),
        pytest.param(
            {"rule": "FREQ=WEEKLY;BYDAY=MO;BYHOUR=2;BYMINUTE=30"},
            "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; "
            "this schedule's times are not affected.",
            id="monday_schedule_untouched_by_sunday_gap",
        ),
        pytest.param(
            {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18", "invalidDatePolicy": "FORWARD"},
            "Dates that do not exist move forward to the first day after: 2026-06-31 runs on 2026-07-01 "
            "(invalidDatePolicy FORWARD).",
            id="day_31_forward",
        ),
        pytest.param(
            {"rule": "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31;BYHOUR=18"},
            "Dates that do not exist get no run: the next is 2026-09-31 (invalidDatePolicy OMIT).",
            id="day_31_every_other_month_omit",
        ),
        pytest.param(
            {"rule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=12", "start": "2024-01-01T00:00:00"},
            "Every year on 29 February at 12:00 in America/New_York. "
            "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; "
            "this schedule's times are not affected.",
            id="leap_day_yearly",
        ),
        pytest.param(
            {"rule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=12", "start": "2024-01-01T00:00:00"},
            "the next is 2027-02-29 (invalidDatePolicy OMIT)",
            id="leap_day_omitted_in_common_years",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=5", "start": "2027-01-01T00:00:00"},
            "Every day at 02:30 in America/New_York, 5 times, starting Fri 2027-01-01.",
            id="future_start_with_count",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;UNTIL=20260301"},
            "it has no runs left after 2026-06-01T00:00:00Z",
            id="ended",
        ),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "P1D", "overlapPolicy": "QUEUE_ONE"},
            "Runs missed by more than 15 min are all made up after an outage, oldest first (misfirePolicy "
            "CATCH_UP_ALL), and nothing older than 1 day is ever run; a run that comes due while the previous one "
            "still runs waits, at most one at a time (overlapPolicy QUEUE_ONE).",
            id="catch_up_all_and_queue_one",
        ),
        pytest.param(
            {"misfirePolicy": "SKIP", "overlapPolicy": "ALLOW", "latenessWindow": "PT5M"},
            "A run missed by more than 5 min (engine down) is not made up (misfirePolicy SKIP); a run may start "
            "while the previous one is still running (overlapPolicy ALLOW).",
            id="misfire_skip_overlap_allow",
        ),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 3, "overlapPolicy": "QUEUE_ALL", "jitter": "PT5M"},
            "only the newest missed 3 runs are made up and the rest expire (misfirePolicy CATCH_UP_BOUNDED, "
            "maxCatchUp 3); runs that come due while the previous one still runs wait and go in order "
            "(overlapPolicy QUEUE_ALL). Each run starts up to 5 min late",
            id="bounded_queue_all_jitter",
        ),
        pytest.param(
            {
                "kind": "after_completion",
                "rule": DROP,
                "delay": "PT24H",
                "start": "2026-07-01T02:30:00",
            },
            "First run at Wed 2026-07-01 02:30 in America/New_York; then each run is due 24 hours after the "
            "previous one finishes. Clock changes do not move the later runs",
            id="after_completion",
        ),
        pytest.param(
            {
                "kind": "after_completion",
                "rule": DROP,
                "delay": "PT6H",
                "start": "2027-03-14T02:30:00",
                "gapPolicy": "SHIFT_FORWARD",
            },
            "First run at Sun 2027-03-14 02:30 in America/New_York; then each run is due 6 hours after the previous "
            "one finishes. The first run's time does not exist that day, so it runs at 03:00 EDT "
            "(gapPolicy SHIFT_FORWARD).",
            id="after_completion_first_appointment_in_gap",
        ),
    ],
)
def test_cases(overrides: dict[str, Any], expected: str) -> None:
    assert expected in _explain(**overrides)


def test_interval_in_a_zone_without_changes() -> None:
    spec = parse_spec(make_data(BASE_INTERVAL, timeZone="Asia/Kolkata", every="PT1H"))
    assert explain(spec, NOW) == (
        "Every hour of elapsed time from 2026-01-01T00:00:00Z, shown on the wall clock of Asia/Kolkata. "
        "Asia/Kolkata has no clock changes ahead. After an outage only the newest missed run is made up and the "
        "rest expire (misfirePolicy CATCH_UP_BOUNDED, maxCatchUp 1); a run that comes due while the previous one "
        "still runs is skipped (overlapPolicy SKIP)."
    )


def test_next_changes_move_with_now(demo: Callable[[str], str]) -> None:
    spec = load_spec(demo("daily-ops-summary"))
    assert "Next gap: Sun 2026-03-08," in explain(spec, utc("2026-01-15T00:00:00Z"))
    assert "Next gap: Sun 2027-03-14," in explain(spec, utc("2026-03-08T08:00:00Z"))


def test_same_input_same_paragraph(demo: Callable[[str], str]) -> None:
    spec = load_spec(demo("mel-sync"))
    assert explain(spec, NOW) == explain(spec, NOW)


# --- the designer's summary: a sentence, then the policies ----------------------------------------


def test_summary_leads_with_one_short_sentence_then_a_line_per_policy(demo: Callable[[str], str]) -> None:
    summary = summarize(load_spec(demo("daily-ops-summary")), NOW)
    assert summary.headline == "Every day at 02:30 in America/New_York."
    assert summary.lines == (
        "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist that day and "
        "this schedule skips it (gapPolicy SKIP).",
        "Next fold: Sun 2026-11-01, clocks fall back from 02:00 EDT to 01:00 EST; "
        "this schedule's times are not affected.",
        "After an outage only the newest missed run is made up and the rest expire (misfirePolicy "
        "CATCH_UP_BOUNDED, maxCatchUp 1); a run that comes due while the previous one still runs is skipped "
        "(overlapPolicy SKIP).",
    )
    # schedctl explain prints the same words as one paragraph.
    assert explain(load_spec(demo("daily-ops-summary")), NOW) == " ".join((summary.headline, *summary.lines))


@pytest.mark.parametrize(
    ("overrides", "now", "sentence"),
    [
        pytest.param(
            {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0", "invalidDatePolicy": "BACKWARD"},
            "2026-11-30T15:00:00Z",
            "Dates that do not exist move back to the last day of the month: 2027-02-31 runs on 2027-02-28 "
            "(invalidDatePolicy BACKWARD).",
            id="backward_after_the_days_run",
        ),
        pytest.param(
            {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0", "invalidDatePolicy": "FORWARD"},
            "2026-11-30T15:00:00Z",
            "Dates that do not exist move forward to the first day after: 2026-11-31 runs on 2026-12-01 "
            "(invalidDatePolicy FORWARD).",
            id="forward_after_the_days_run",
        ),
        pytest.param(
            {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=9;BYMINUTE=0"},
            "2026-11-30T15:00:00Z",
            "Dates that do not exist get no run: the next is 2026-11-31 (invalidDatePolicy OMIT).",
            id="omit_after_the_days_run",
        ),
        pytest.param(
            {"rule": "FREQ=MONTHLY;BYMONTHDAY=8;BYHOUR=2;BYMINUTE=30"},
            "2027-03-01T12:00:00Z",
            # The zone's next gap (2027-03-14) leaves the 8th alone; the first that does not is named.
            "Next gap that touches this schedule: Sun 2037-03-08, clocks jump from 02:00 EST to 03:00 EDT; "
            "02:30 does not exist that day and this schedule skips it (gapPolicy SKIP).",
            id="gap_years_away",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "gapPolicy": "SHIFT_FORWARD"},
            # 07:15Z: the clocks jumped at 07:00Z and this year's 03:00 EDT run has gone.
            "2027-03-14T07:15:00Z",
            "Next gap: Sun 2028-03-12, clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist that day and "
            "this schedule runs it at 03:00 EDT instead (gapPolicy SHIFT_FORWARD).",
            id="inside_the_gap",
        ),
    ],
)
def test_summary_names_what_the_consequences_name(overrides: dict[str, Any], now: str, sentence: str) -> None:
    spec = parse_spec(make_data(**overrides))
    at = utc(now)
    summary = summarize(spec, at)
    assert sentence in summary.lines
    # Its dates are those of the rows the consequence lines name, which the preview from ``now`` lists.
    found = consequences(spec, at)
    parts = [p for p in (found.gap, found.fold, found.invalid_date) if p is not None and p.outcome is not None]
    outcomes = [p.outcome for p in parts if p.outcome is not None]
    rows = [row for o in outcomes for row in (*o.rows, *([o.following] if o.following else []))]
    preview = build_preview(spec, at, until=max(r.position for r in rows) + timedelta(days=1)).rows
    assert all(row in preview for row in rows)
    dates = {r.nominal.date().isoformat() for r in rows} | {o.missing for o in outcomes}
    assert set(re.findall(r"\d{4}-\d{2}-\d{2}", sentence)) <= dates
