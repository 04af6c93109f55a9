"""Misfire recovery decisions (invariant 6) as a pure function."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine import misfire
from core.engine.misfire import Action, Due, certain_expiry, plan_recovery
from core.enums import MisfirePolicy
from core.recurrence.compile import CompiledSchedule, CountHint, compile_schedule
from core.recurrence.expand import expand
from core.spec.validation import parse_spec

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


@pytest.mark.parametrize(
    ("bound", "words"),
    [
        pytest.param(1, "only the newest run is made up", id="one_is_singular"),
        pytest.param(2, "only the newest 2 are made up", id="two_plural"),
        pytest.param(1500, "only the newest 1,500 are made up", id="thousands_separated"),
    ],
)
def test_bounded_reason_agrees_with_its_count(bound: int, words: str) -> None:
    decisions = plan_recovery(
        daily_missed(bound + 2), NOW, MisfirePolicy.CATCH_UP_BOUNDED, max_catch_up=bound, lateness_window=WINDOW
    )
    expired = [d.reason for d in decisions if d.action is Action.EXPIRE]
    assert expired and all(f"; {words} (misfirePolicy CATCH_UP_BOUNDED)" in (r or "") for r in expired)
    assert not any("newest 1 are" in (r or "") for r in expired)


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


# --- where certain expiry ends (long outages) -----------------------------------------------


def _compiled(**keys: object) -> CompiledSchedule:
    data: dict[str, object] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "s",
        "revision": 1,
        "timeZone": "UTC",
        "rule": "FREQ=HOURLY;BYMINUTE=5",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "latenessWindow": "PT15M",
    }
    data.update(keys)
    return compile_schedule(parse_spec({k: v for k, v in data.items() if v is not None}))


FROM = datetime(2026, 2, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("keys", "before", "policy"),
    [
        # 12:00 now: late = due before 11:45; the newest late hourly run is 11:05.
        pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1}, "11:05", "CATCH_UP_BOUNDED", id="bound_1"),
        pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 3}, "09:05", "CATCH_UP_BOUNDED", id="bound_3"),
        pytest.param({"misfirePolicy": "SKIP"}, "11:45", "SKIP", id="skip_everything_late"),
        pytest.param({"misfirePolicy": "SKIP", "jitter": "PT10M"}, "11:35", "SKIP", id="skip_minus_jitter"),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 1, "jitter": "PT10M"},
            "10:55",
            "CATCH_UP_BOUNDED",
            id="bound_minus_jitter",
        ),
        pytest.param({"misfirePolicy": "CATCH_UP_ALL", "catchUpWindow": "PT6H"}, "06:00", "catchUpWindow", id="window"),
        pytest.param(
            {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 50, "catchUpWindow": "PT2H"},
            "10:00",
            "catchUpWindow",
            id="window_nearer_than_the_bound",
        ),
    ],
)
def test_certain_expiry_cut(keys: dict[str, object], before: str, policy: str) -> None:
    cut = certain_expiry(_compiled(**keys), FROM, NOW)
    assert cut is not None
    assert (cut.before, cut.policy) == (datetime.fromisoformat(f"2026-03-10T{before}:00+00:00"), policy)


def test_catch_up_all_without_window_is_never_certain() -> None:
    assert certain_expiry(_compiled(misfirePolicy="CATCH_UP_ALL"), FROM, NOW) is None


def test_too_few_late_runs_for_the_bound_means_nothing_is_certain() -> None:
    compiled = _compiled(misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=5)
    assert certain_expiry(compiled, datetime(2026, 3, 10, 8, 0, tzinfo=UTC), NOW) is None


@pytest.mark.parametrize(
    "zone",
    [pytest.param("UTC", id="fixed_offset"), pytest.param("America/New_York", id="across_the_spring_gap")],
)
@settings(max_examples=30, deadline=None)
@given(bound=st.integers(min_value=1, max_value=40), hours=st.integers(min_value=1, max_value=24 * 20))
def test_the_cut_agrees_with_plan_recovery(zone: str, bound: int, hours: int) -> None:
    """Everything before the cut is expired by plan_recovery over the same rows, and
    the bound's newest late ones all lie at or after it."""
    compiled = _compiled(timeZone=zone, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=bound)
    now = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
    start = now - timedelta(hours=hours)
    rows = [r for r in expand(compiled, start, now) if r.runnable]
    decisions = plan_recovery(
        [Due(r.occurrence_id, r.dispatch) for r in rows],
        now,
        MisfirePolicy.CATCH_UP_BOUNDED,
        max_catch_up=bound,
        lateness_window=WINDOW,
    )
    position = {r.occurrence_id: r.position for r in rows}
    cut = certain_expiry(compiled, start, now)
    if cut is None:
        assert sum(d.action is not Action.RUN for d in decisions) <= bound
        return
    for d in decisions:
        if position[d.occurrence_id] < cut.before:
            assert d.action is Action.EXPIRE, d
    assert sum(d.action is Action.CATCH_UP and position[d.occurrence_id] >= cut.before for d in decisions) == bound


@pytest.mark.parametrize(
    ("keys", "hours"),
    [
        pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2}, 6, id="bound_fixed_offset"),
        pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2, "exclude": ["2026-03-09"]}, 6, id="bound"),
        pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2}, 0, id="nothing_late"),
    ],
)
def test_a_count_rule_is_walked_from_its_known_place(walked: list[int], keys: dict[str, object], hours: int) -> None:
    """Every minute since November, a billion times: given its place in the count two days
    before the search, the cut is the one a walk from DTSTART finds, for a few thousand times."""
    rule = {"rule": "FREQ=MINUTELY;COUNT=1000000000", "start": "2025-11-01T00:00:00", **keys}
    search_from = NOW - timedelta(hours=hours)
    place = datetime(2026, 3, 8, 12, 0) - timedelta(hours=hours)
    index = int((place - datetime(2025, 11, 1)) / timedelta(minutes=1))
    hinted = certain_expiry(_compiled(**rule), search_from, NOW, CountHint(place, index))
    assert walked[0] < 4 * 24 * 60, walked[0]
    assert hinted == certain_expiry(_compiled(**rule), search_from, NOW)
    assert walked[0] > 180_000 or hinted is None  # the walk from DTSTART, for the reference


def test_a_known_place_at_the_time_asked_is_not_the_place_before_it() -> None:
    """The place in the count before ``local`` is found although the one at ``local`` is known."""
    compiled = _compiled(rule="FREQ=HOURLY;COUNT=100", start="2026-01-01T00:00:00")
    compiled.known_counts.append(CountHint(datetime(2026, 1, 2, 0, 0), 24))
    assert compiled.count_position(datetime(2026, 1, 2, 0, 0), None) == CountHint(datetime(2026, 1, 1, 23, 0), 23)
    assert compiled.count_position(datetime(2026, 1, 2, 0, 0), CountHint(datetime(2026, 1, 2), 24)) == CountHint(
        datetime(2026, 1, 1, 23, 0), 23
    )


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=HOURLY;BYMINUTE=5",
        "FREQ=MINUTELY",
        "FREQ=MINUTELY;INTERVAL=15;BYHOUR=9,10,11",
        "FREQ=DAILY;BYHOUR=6;BYMINUTE=15",
        "FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=9",
        "FREQ=MONTHLY;BYMONTHDAY=1,-1;BYHOUR=23;BYMINUTE=59",
        "FREQ=HOURLY;UNTIL=20260305T000000",
    ],
)
@pytest.mark.parametrize("bound", [1, 3, 40])
def test_a_fast_rules_cut_is_found_by_date_arithmetic(rule: str, bound: int) -> None:
    """Counted, not timed: where date arithmetic gives the rule's times (a fixed offset, no
    exclusions), the newest late runs are found without walking dateutil's rrule, at the cut
    the rrule's walk finds."""
    compiled = _compiled(timeZone="UTC", rule=rule, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=bound)
    with mock.patch.object(misfire, "fast_rule", lambda compiled: None):
        walked = certain_expiry(compiled, FROM, NOW)
    with mock.patch.object(CompiledSchedule, "nominals", side_effect=AssertionError("the rrule was walked")):
        found = certain_expiry(compiled, FROM, NOW)
    assert found == walked
    assert found is not None or bound > 1  # the newest late run is always there
