"""What-if: the misfire policy's decisions for an outage, through the engine's own plan_recovery."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import BASE_INTERVAL, make_data, utc
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.misfire import Action
from core.errors import ComputeLimitError, UserError
from core.explain.whatif import what_if
from core.spec.validation import parse_spec

# A three-day outage of the New York 02:30 daily schedule (02:30 EDT = 06:30Z):
# due on Jun 1, 2 and 3; back on Jun 4 00:00Z.
OFF_FROM, OFF_TO = "2026-06-01T00:00:00Z", "2026-06-04T00:00:00Z"
JUN1, JUN2, JUN3 = "2026-06-01T06:30:00Z", "2026-06-02T06:30:00Z", "2026-06-03T06:30:00Z"

CASES: list[tuple[str, dict[str, Any], list[tuple[str, Action]]]] = [
    (
        "bounded_1_runs_newest",
        {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1},
        [(JUN1, Action.EXPIRE), (JUN2, Action.EXPIRE), (JUN3, Action.CATCH_UP)],
    ),
    (
        "bounded_2_runs_two_newest",
        {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2},
        [(JUN1, Action.EXPIRE), (JUN2, Action.CATCH_UP), (JUN3, Action.CATCH_UP)],
    ),
    (
        "skip_expires_all",
        {"misfirePolicy": "SKIP"},
        [(JUN1, Action.EXPIRE), (JUN2, Action.EXPIRE), (JUN3, Action.EXPIRE)],
    ),
    (
        "catch_up_all_runs_all",
        {"misfirePolicy": "CATCH_UP_ALL"},
        [(JUN1, Action.CATCH_UP), (JUN2, Action.CATCH_UP), (JUN3, Action.CATCH_UP)],
    ),
    (
        "catch_up_window_expires_older",
        {"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "P1D"},
        [(JUN1, Action.EXPIRE), (JUN2, Action.EXPIRE), (JUN3, Action.CATCH_UP)],
    ),
    (
        "default_policy_is_bounded_1",
        {},
        [(JUN1, Action.EXPIRE), (JUN2, Action.EXPIRE), (JUN3, Action.CATCH_UP)],
    ),
]


@pytest.mark.parametrize(("overrides", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_three_day_outage(overrides: dict[str, Any], expected: list[tuple[str, Action]]) -> None:
    rows = what_if(parse_spec(make_data(**overrides)), utc(OFF_FROM), utc(OFF_TO))
    assert [(r.occurrence.resolved_utc, r.action) for r in rows] == expected
    assert all(r.due == r.occurrence.dispatch for r in rows)


def test_reasons_name_the_policy() -> None:
    rows = what_if(parse_spec(make_data(misfirePolicy="CATCH_UP_ALL", catchUpWindow="P1D")), utc(OFF_FROM), utc(OFF_TO))
    assert "catchUpWindow (P1D)" in (rows[0].reason or "")
    assert "CATCH_UP_ALL" in (rows[-1].reason or "")


def test_recent_occurrence_within_lateness_runs_normally() -> None:
    # Back at 06:40Z, ten minutes after the Jun 3 run was due: within the 15-minute window.
    rows = what_if(parse_spec(make_data(misfirePolicy="SKIP")), utc(OFF_FROM), utc("2026-06-03T06:40:00Z"))
    assert [(r.occurrence.resolved_utc, r.action) for r in rows] == [
        (JUN1, Action.EXPIRE),
        (JUN2, Action.EXPIRE),
        (JUN3, Action.RUN),
    ]
    assert rows[-1].reason is None


def test_spring_gap_row_never_comes_due() -> None:
    # New York 2027-03-14 02:30 does not exist (SKIP): only the 13th and 15th were due.
    rows = what_if(
        parse_spec(make_data(misfirePolicy="CATCH_UP_ALL")),
        utc("2027-03-13T00:00:00Z"),
        utc("2027-03-16T00:00:00Z"),
    )
    assert [r.occurrence.nominal_local for r in rows] == ["2027-03-13T02:30:00", "2027-03-15T02:30:00"]


def test_outage_without_occurrences_is_empty() -> None:
    assert what_if(parse_spec(make_data()), utc("2026-06-01T07:00:00Z"), utc("2026-06-02T06:00:00Z")) == []


def test_end_before_start_is_refused() -> None:
    with pytest.raises(UserError, match="choose an end after the start"):
        what_if(parse_spec(make_data()), utc(OFF_TO), utc(OFF_FROM))


def test_naive_instants_are_refused() -> None:
    with pytest.raises(UserError, match="aware"):
        what_if(parse_spec(make_data()), datetime(2026, 6, 1), datetime(2026, 6, 4))


def test_too_long_outage_is_refused_with_a_message() -> None:
    spec = parse_spec(make_data(BASE_INTERVAL))
    with pytest.raises(
        ComputeLimitError, match=r"more than 10,000 occurrences of every-quarter-hour; choose a shorter"
    ):
        what_if(spec, utc("2026-01-01T00:00:00Z"), utc("2026-12-31T00:00:00Z"))


def test_interval_outage_counts_every_instant() -> None:
    spec = parse_spec(make_data(BASE_INTERVAL, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=3))
    rows = what_if(spec, utc("2026-02-01T00:00:00Z"), utc("2026-02-01T02:00:00Z"))
    # 00:00 … 02:00 inclusive: 9 instants; 02:00 and 01:45 are within the lateness window.
    assert len(rows) == 9
    assert [r.action for r in rows].count(Action.RUN) == 2
    assert [r.action for r in rows].count(Action.CATCH_UP) == 3


@settings(max_examples=30, deadline=None)
@given(
    days=st.integers(min_value=1, max_value=20),
    bound=st.integers(min_value=1, max_value=5),
    start_hour=st.integers(min_value=0, max_value=23),
)
def test_never_more_catch_ups_than_the_bound(days: int, bound: int, start_hour: int) -> None:
    spec = parse_spec(make_data(misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=bound))
    off_from = datetime(2026, 10, 20, start_hour, tzinfo=UTC)
    rows = what_if(spec, off_from, off_from + timedelta(days=days))
    catch_ups = [r for r in rows if r.action is Action.CATCH_UP]
    assert len(catch_ups) <= bound
    assert [r.due for r in rows] == sorted(r.due for r in rows)
    # The caught-up ones are the newest late ones.
    late = [r for r in rows if r.action is not Action.RUN]
    assert catch_ups == late[len(late) - len(catch_ups) :]
