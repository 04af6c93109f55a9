"""Misfire recovery decisions (invariant 6) as a pure function."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.misfire import Action, Due, plan_recovery
from core.enums import MisfirePolicy

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=15)


def daily_missed(days: int) -> list[Due]:
    """One occurrence a day at 09:00Z for ``days`` days up to today, the newest first in the list."""
    return [Due(f"occ-{i:02d}", datetime(2026, 3, 10, 9, 0, tzinfo=UTC) - timedelta(days=i)) for i in range(days)]


def actions(decisions: list) -> list[tuple[str, Action]]:
    return [(d.occurrence_id, d.action) for d in decisions]


@pytest.mark.parametrize(
    ("policy", "bound", "catch_up_window", "expected"),
    [
        pytest.param(
            MisfirePolicy.SKIP,
            None,
            None,
            {"occ-03": Action.EXPIRE, "occ-02": Action.EXPIRE, "occ-01": Action.EXPIRE, "occ-00": Action.EXPIRE},
            id="skip_expires_all",
        ),
        pytest.param(
            MisfirePolicy.CATCH_UP_ALL,
            None,
            None,
            {
                "occ-03": Action.CATCH_UP,
                "occ-02": Action.CATCH_UP,
                "occ-01": Action.CATCH_UP,
                "occ-00": Action.CATCH_UP,
            },
            id="catch_up_all_runs_all",
        ),
        pytest.param(
            MisfirePolicy.CATCH_UP_BOUNDED,
            1,
            None,
            {"occ-03": Action.EXPIRE, "occ-02": Action.EXPIRE, "occ-01": Action.EXPIRE, "occ-00": Action.CATCH_UP},
            id="bounded_1_runs_newest",
        ),
        pytest.param(
            MisfirePolicy.CATCH_UP_BOUNDED,
            2,
            None,
            {"occ-03": Action.EXPIRE, "occ-02": Action.EXPIRE, "occ-01": Action.CATCH_UP, "occ-00": Action.CATCH_UP},
            id="bounded_2_runs_two_newest",
        ),
        pytest.param(
            MisfirePolicy.CATCH_UP_ALL,
            None,
            timedelta(days=2),
            {"occ-03": Action.EXPIRE, "occ-02": Action.EXPIRE, "occ-01": Action.CATCH_UP, "occ-00": Action.CATCH_UP},
            id="catch_up_window_expires_old",
        ),
    ],
)
def test_policies_after_four_missed_days(policy, bound, catch_up_window, expected) -> None:
    decisions = plan_recovery(
        daily_missed(4), NOW, policy, max_catch_up=bound, lateness_window=WINDOW, catch_up_window=catch_up_window
    )
    assert [d.occurrence_id for d in decisions] == ["occ-03", "occ-02", "occ-01", "occ-00"]  # oldest first
    assert dict(actions(decisions)) == expected
    for d in decisions:
        assert (d.reason is None) == (d.action is Action.RUN)


def test_within_the_lateness_window_is_no_misfire() -> None:
    due = [Due("occ-a", NOW - timedelta(minutes=14)), Due("occ-b", NOW - timedelta(minutes=16))]
    decisions = plan_recovery(due, NOW, MisfirePolicy.SKIP, max_catch_up=None, lateness_window=WINDOW)
    assert actions(decisions) == [("occ-b", Action.EXPIRE), ("occ-a", Action.RUN)]
    assert "latenessWindow (PT15M)" in (decisions[0].reason or "")


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    offsets=st.lists(st.integers(min_value=0, max_value=60 * 24 * 30), min_size=0, max_size=60, unique=True),
    policy=st.sampled_from(list(MisfirePolicy)),
    bound=st.integers(min_value=1, max_value=5),
    window_minutes=st.integers(min_value=0, max_value=120),
    catch_up_hours=st.one_of(st.none(), st.integers(min_value=1, max_value=24 * 40)),
)
def test_never_more_executions_than_the_bound(offsets, policy, bound, window_minutes, catch_up_hours) -> None:
    due = [Due(f"occ-{m}", NOW - timedelta(minutes=m)) for m in offsets]
    window = timedelta(minutes=window_minutes)
    cuw = None if catch_up_hours is None else timedelta(hours=catch_up_hours)
    decisions = plan_recovery(due, NOW, policy, max_catch_up=bound, lateness_window=window, catch_up_window=cuw)
    assert sorted(d.occurrence_id for d in decisions) == sorted(d.occurrence_id for d in due)
    assert [d.due for d in decisions] == sorted(d.due for d in decisions)
    caught = [d for d in decisions if d.action is Action.CATCH_UP]
    for d in decisions:
        late = d.due + window < NOW
        assert (d.action is Action.RUN) == (not late)
        if cuw is not None and late and d.due < NOW - cuw:
            assert d.action is Action.EXPIRE
    if policy is MisfirePolicy.SKIP:
        assert caught == []
    if policy is MisfirePolicy.CATCH_UP_BOUNDED:
        assert len(caught) <= bound
        # The ones made up are the newest eligible ones.
        expired_late = [d for d in decisions if d.action is Action.EXPIRE]
        if caught and expired_late:
            too_old = [d for d in expired_late if cuw is None or d.due >= NOW - cuw]
            assert all(e.due <= min(c.due for c in caught) for e in too_old)
