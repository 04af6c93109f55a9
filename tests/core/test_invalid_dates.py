"""Dates a rule names but the calendar lacks (docs/contract.md §2, RFC 7529 vocabulary).

OMIT drops them (RFC 5545); BACKWARD moves them to the last valid day before,
FORWARD to the first valid day after. A moved date is the row's nominalLocal
and its reason says where it came from; a date reached twice is one row, and
COUNT counts rows.
"""

from __future__ import annotations

import pytest
from helpers import compiled, first_n, make_data, rows_between

from core.enums import Status
from core.errors import SpecError
from core.spec.validation import parse_spec

#: Every case runs through the fast path and the general one (tests/core/conftest.py).
pytestmark = pytest.mark.usefixtures("expansion_path")


def nominals(rule: str, start: str, policy: str, count: int) -> list[str]:
    spec = compiled(rule=rule, start=start, invalidDatePolicy=policy, timeZone="UTC")
    return [r.nominal_local for r in first_n(spec, start[:10] + "T00:00:00Z", count)]


@pytest.mark.parametrize(
    ("rule", "start", "policy", "count", "expected"),
    [
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31", "2026-01-31T09:00:00", "OMIT", 7,
            ["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31", "2026-08-31", "2026-10-31", "2026-12-31"],
            id="day_31_omit",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31", "2026-01-31T09:00:00", "BACKWARD", 12,
            ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30",
             "2026-07-31", "2026-08-31", "2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31"],
            id="day_31_backward",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31", "2026-01-31T09:00:00", "FORWARD", 12,
            ["2026-01-31", "2026-03-01", "2026-03-31", "2026-05-01", "2026-05-31", "2026-07-01",
             "2026-07-31", "2026-08-31", "2026-10-01", "2026-10-31", "2026-12-01", "2026-12-31"],
            id="day_31_forward",
        ),
        pytest.param(
            # The day comes from start when the rule names none.
            "FREQ=MONTHLY", "2026-01-31T09:00:00", "BACKWARD", 4,
            ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"],
            id="day_from_start_backward",
        ),
        pytest.param(
            "FREQ=MONTHLY", "2026-01-31T09:00:00", "OMIT", 3,
            ["2026-01-31", "2026-03-31", "2026-05-31"],
            id="day_from_start_omit",
        ),
        pytest.param(
            "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31", "2026-01-01T09:00:00", "BACKWARD", 3,
            ["2026-04-30", "2027-04-30", "2028-04-30"],
            id="april_31_backward",
        ),
        pytest.param(
            "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31", "2026-01-01T09:00:00", "FORWARD", 3,
            ["2026-05-01", "2027-05-01", "2028-05-01"],
            id="april_31_forward",
        ),
        pytest.param(
            "FREQ=YEARLY", "2024-02-29T09:00:00", "OMIT", 3,
            ["2024-02-29", "2028-02-29", "2032-02-29"],
            id="feb_29_yearly_omit",
        ),
        pytest.param(
            "FREQ=YEARLY", "2024-02-29T09:00:00", "BACKWARD", 5,
            ["2024-02-29", "2025-02-28", "2026-02-28", "2027-02-28", "2028-02-29"],
            id="feb_29_yearly_backward",
        ),
        pytest.param(
            "FREQ=YEARLY", "2024-02-29T09:00:00", "FORWARD", 5,
            ["2024-02-29", "2025-03-01", "2026-03-01", "2027-03-01", "2028-02-29"],
            id="feb_29_yearly_forward",
        ),
        pytest.param(
            # Feb 30 and Feb 31 both move to Feb 28: one row. Apr 31 lands on the real Apr 30.
            "FREQ=MONTHLY;BYMONTHDAY=30,31", "2026-01-30T09:00:00", "BACKWARD", 8,
            ["2026-01-30", "2026-01-31", "2026-02-28", "2026-03-30", "2026-03-31", "2026-04-30",
             "2026-05-30", "2026-05-31"],
            id="day_30_31_backward_dedupe",
        ),
        pytest.param(
            # Feb 30 and Feb 31 both move to Mar 1: one row.
            "FREQ=MONTHLY;BYMONTHDAY=30,31", "2026-01-30T09:00:00", "FORWARD", 8,
            ["2026-01-30", "2026-01-31", "2026-03-01", "2026-03-30", "2026-03-31", "2026-04-30",
             "2026-05-01", "2026-05-30"],
            id="day_30_31_forward_dedupe",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=30,31", "2026-01-30T09:00:00", "OMIT", 6,
            ["2026-01-30", "2026-01-31", "2026-03-30", "2026-03-31", "2026-04-30", "2026-05-30"],
            id="day_30_31_omit",
        ),
        pytest.param(
            # Apr 31 moves forward to May 1, which the rule also names: one row.
            "FREQ=MONTHLY;BYMONTHDAY=1,31", "2026-03-01T09:00:00", "FORWARD", 6,
            ["2026-03-01", "2026-03-31", "2026-04-01", "2026-05-01", "2026-05-31", "2026-06-01"],
            id="day_1_31_forward_dedupe_across_months",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4", "2026-01-31T09:00:00", "OMIT", 10,
            ["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31"],
            id="count_4_omit",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4", "2026-01-31T09:00:00", "BACKWARD", 10,
            ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"],
            id="count_4_backward",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4", "2026-01-31T09:00:00", "FORWARD", 10,
            ["2026-01-31", "2026-03-01", "2026-03-31", "2026-05-01"],
            id="count_4_forward",
        ),
        pytest.param(
            # COUNT counts rows after merging: Feb 30 and 31 make one.
            "FREQ=MONTHLY;BYMONTHDAY=30,31;COUNT=5", "2026-01-30T09:00:00", "BACKWARD", 10,
            ["2026-01-30", "2026-01-31", "2026-02-28", "2026-03-30", "2026-03-31"],
            id="count_5_backward_counts_merged_rows",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYMONTHDAY=30,31;COUNT=5", "2026-01-30T09:00:00", "FORWARD", 10,
            ["2026-01-30", "2026-01-31", "2026-03-01", "2026-03-30", "2026-03-31"],
            id="count_5_forward_counts_merged_rows",
        ),
        pytest.param(
            "FREQ=YEARLY;COUNT=3", "2024-02-29T09:00:00", "BACKWARD", 10,
            ["2024-02-29", "2025-02-28", "2026-02-28"],
            id="feb_29_count_3_backward",
        ),
        pytest.param(
            # Negative days and day-pickers only name real days: nothing moves.
            "FREQ=MONTHLY;BYMONTHDAY=-1", "2026-01-31T09:00:00", "FORWARD", 3,
            ["2026-01-31", "2026-02-28", "2026-03-31"],
            id="last_day_never_invalid",
        ),
        pytest.param(
            "FREQ=MONTHLY;BYDAY=-1FR", "2026-01-01T09:00:00", "BACKWARD", 3,
            ["2026-01-30", "2026-02-27", "2026-03-27"],
            id="weekday_rule_unaffected",
        ),
        pytest.param(
            "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=31", "2026-01-31T09:00:00", "BACKWARD", 4,
            ["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31"],
            id="interval_2_skips_short_months_by_itself",
        ),
        pytest.param(
            "FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=31", "2026-02-28T09:00:00", "FORWARD", 4,
            ["2026-03-01", "2026-05-31", "2026-08-31", "2026-12-01"],
            id="interval_3_forward",
        ),
    ],
)  # fmt: skip
def test_invalid_date_policy(rule: str, start: str, policy: str, count: int, expected: list[str]) -> None:
    time = start[10:]
    assert nominals(rule, start, policy, count) == [d + time for d in expected]


@pytest.mark.parametrize(
    ("policy", "nominal", "reason"),
    [
        pytest.param(
            "BACKWARD", "2026-04-30T09:00:00",
            "2026-04-31 does not exist: moved back to 2026-04-30, "
            "the last day of the month (invalidDatePolicy BACKWARD)",
            id="backward_reason",
        ),
        pytest.param(
            "FORWARD", "2026-05-01T09:00:00",
            "2026-04-31 does not exist: moved forward to 2026-05-01, "
            "the first day after it (invalidDatePolicy FORWARD)",
            id="forward_reason",
        ),
    ],
)  # fmt: skip
def test_moved_row_says_where_it_came_from(policy: str, nominal: str, reason: str) -> None:
    spec = compiled(rule="FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31", start="2026-01-01T09:00:00", invalidDatePolicy=policy)
    (row,) = first_n(spec, "2026-01-01T00:00:00Z", 1)
    assert (row.nominal_local, row.status, row.reason) == (nominal, Status.SCHEDULED, reason)


def test_real_dates_carry_no_reason() -> None:
    spec = compiled(rule="FREQ=MONTHLY;BYMONTHDAY=31", start="2026-01-31T09:00:00", invalidDatePolicy="BACKWARD")
    rows = first_n(spec, "2026-01-01T00:00:00Z", 3)
    assert [(r.nominal_local, r.reason is None) for r in rows] == [
        ("2026-01-31T09:00:00", True),
        ("2026-02-28T09:00:00", False),
        ("2026-03-31T09:00:00", True),
    ]


@pytest.mark.parametrize(
    ("gap", "status", "resolved_utc"),
    [
        pytest.param("SKIP", Status.SKIPPED_GAP, None, id="skip"),
        pytest.param("SHIFT_FORWARD", Status.SHIFTED, "2023-10-01T04:00:00Z", id="shift_forward"),
    ],
)
def test_moved_date_in_a_gap_gets_both_reasons(gap: str, status: Status, resolved_utc: str | None) -> None:
    # Paraguay's 2023 clock change skipped 00:00-01:00 on 2023-10-01 (-04 -> -03),
    # exactly where "September 31" moves forward to.
    spec = compiled(
        timeZone="America/Asuncion",
        rule="FREQ=YEARLY;BYMONTH=9;BYMONTHDAY=31",
        start="2023-01-01T00:30:00",
        invalidDatePolicy="FORWARD",
        gapPolicy=gap,
    )
    (row,) = first_n(spec, "2023-01-01T00:00:00Z", 1)
    assert (row.nominal_local, row.status, row.resolved_utc) == ("2023-10-01T00:30:00", status, resolved_utc)
    assert row.reason is not None
    assert row.reason.startswith(
        "2023-09-31 does not exist: moved forward to 2023-10-01, the first day after it (invalidDatePolicy FORWARD); "
        "00:30 does not exist on 2023-10-01 in America/Asuncion: clocks jump from 00:00 -04 to 01:00 -03"
    )


def test_exclude_a_moved_date() -> None:
    spec = compiled(
        rule="FREQ=MONTHLY;BYMONTHDAY=31",
        start="2026-01-31T09:00:00",
        invalidDatePolicy="BACKWARD",
        exclude=["2026-02-28"],
    )
    rows = first_n(spec, "2026-01-01T00:00:00Z", 3)
    assert [(r.nominal_local, r.status) for r in rows] == [
        ("2026-01-31T09:00:00", Status.SCHEDULED),
        ("2026-02-28T09:00:00", Status.EXCLUDED),
        ("2026-03-31T09:00:00", Status.SCHEDULED),
    ]


@pytest.mark.parametrize("policy", ["BACKWARD", "FORWARD"])
def test_end_bounds_moved_dates(policy: str) -> None:
    spec = compiled(
        rule="FREQ=MONTHLY;BYMONTHDAY=31",
        start="2026-01-31T09:00:00",
        invalidDatePolicy=policy,
        end="2026-04-30",
    )
    rows = rows_between(spec, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")
    expected = {
        "BACKWARD": ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"],
        "FORWARD": ["2026-01-31", "2026-03-01", "2026-03-31"],
    }[policy]
    assert [r.nominal_local[:10] for r in rows] == expected


@pytest.mark.parametrize("policy", ["BACKWARD", "FORWARD"])
def test_moved_rows_do_not_depend_on_from(policy: str) -> None:
    spec = compiled(rule="FREQ=MONTHLY;BYMONTHDAY=30,31;COUNT=9", start="2026-01-30T09:00:00", invalidDatePolicy=policy)
    full = rows_between(spec, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")
    later = rows_between(spec, "2026-03-01T00:00:00Z", "2027-01-01T00:00:00Z")
    tail = [r for r in full if r.nominal_local >= "2026-03-01"]
    assert [(r.occurrence_id, r.status, r.reason) for r in later] == [
        (r.occurrence_id, r.status, r.reason) for r in tail
    ]
    assert len(full) == 9


@pytest.mark.parametrize(
    "rule",
    [
        pytest.param("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", id="feb_30"),
        pytest.param("FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31", id="apr_31"),
        pytest.param("FREQ=YEARLY;BYMONTH=2,4,6;BYMONTHDAY=31", id="feb_apr_jun_31"),
    ],
)
def test_omit_refuses_a_rule_that_never_yields(rule: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(make_data(rule=rule, invalidDatePolicy="OMIT"))
    assert [p.key for p in info.value.problems] == ["rule"]
    assert "yields no occurrence" in info.value.problems[0].message
