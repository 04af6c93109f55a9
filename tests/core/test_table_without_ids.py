"""The table shows no ids, so its rows are made without them (``stream_preview(..., ids=False)``):
the text must be the one the rows with ids give, byte for byte, over real zones and their clock
changes, collisions whose reasons name the winner's id, jitter and business periods included."""

from __future__ import annotations

import io
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from helpers import DROP, make_data

from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.recurrence.preview import build_preview, stream_preview
from core.render import needs_ids, render, write
from core.spec.validation import parse_spec

_FORWARD = {"gapPolicy": "SHIFT_FORWARD"}
_HOLIDAYS = {"businessCalendar": {"holidays": ["US-NY"]}, "holidayPolicy": "NEXT_BUSINESS_DAY"}
#: (id, zone, rule, more of the spec, where the rows start): clock changes of real zones first.
_TABLE = [
    ("new_york_gap_skip", "America/New_York", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", {}, "2026-03-01"),
    (
        "new_york_gap_collides_with_three",
        "America/New_York",
        "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0,30",
        {"gapPolicy": "SHIFT_FORWARD", "foldPolicy": "BOTH"},
        "2026-03-05",
    ),
    ("new_york_fold_both", "America/New_York", "FREQ=MINUTELY;INTERVAL=10", {"foldPolicy": "BOTH"}, "2026-10-31"),
    ("lord_howe_30min_fold", "Australia/Lord_Howe", "FREQ=MINUTELY;INTERVAL=15", _FORWARD, "2026-04-04T14:00:00"),
    ("lord_howe_30min_gap", "Australia/Lord_Howe", "FREQ=HOURLY", _FORWARD, "2026-10-03T14:00:00"),
    ("chatham_fold", "Pacific/Chatham", "FREQ=MINUTELY;INTERVAL=15", {"foldPolicy": "BOTH"}, "2026-04-04T12:00:00"),
    ("apia_2011_lost_day", "Pacific/Apia", "FREQ=HOURLY;INTERVAL=6", {"start": "2011-12-25T00:00:00"}, "2011-12-28"),
    ("troll_two_hour_gap", "Antarctica/Troll", "FREQ=MINUTELY;INTERVAL=20", _FORWARD, "2026-03-28T23:00:00"),
    (
        "berlin_weekly_shift_by_gap",
        "Europe/Berlin",
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30",
        {"gapPolicy": "SHIFT_BY_GAP"},
        "2026-03-01",
    ),
    ("jitter", "America/New_York", "FREQ=DAILY;BYHOUR=9", {"jitter": "PT5M"}, "2026-03-01"),
    (
        "business_period",
        "America/New_York",
        "FREQ=HOURLY;INTERVAL=4",
        {"businessPeriod": "{nominal:%Y-%m-%d}", **_FORWARD},
        "2026-03-06",
    ),
    ("business_days", "America/New_York", "FREQ=DAILY;BYHOUR=9", _HOLIDAYS, "2026-11-20"),
    ("excluded", "America/New_York", "FREQ=MINUTELY;INTERVAL=7", {"exclude": ["2026-03-08"], **_FORWARD}, "2026-03-07"),
    (
        "interval_fold",
        "America/New_York",
        DROP,
        {"kind": "interval", "every": "PT45M", "anchor": "2026-10-31T00:00:00Z", "start": DROP},
        "2026-11-01",
    ),
    (
        "after_completion_in_gap",
        "America/New_York",
        DROP,
        {"kind": "after_completion", "delay": "PT24H", "start": "2026-03-08T02:30:00"},
        "2026-03-01",
    ),
]
CASES = [
    pytest.param({"timeZone": zone, "rule": rule, **more}, start, id=name) for name, zone, rule, more, start in _TABLE
]


def _spec(overrides: dict[str, Any]) -> Any:
    data = make_data(**overrides)
    if data.get("kind") == "interval":
        data = {k: v for k, v in data.items() if k not in ("gapPolicy", "foldPolicy")}
    return parse_spec(data)


def _start(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(("overrides", "start"), CASES)
@pytest.mark.parametrize("color", [False, True])
def test_the_table_of_rows_without_ids_is_the_table_of_rows_with_them(
    overrides: dict[str, Any], start: str, color: bool
) -> None:
    spec = _spec(overrides)
    expected = render(build_preview(spec, _start(start), count=600), "table", color=color)
    got = io.StringIO()
    write(stream_preview(spec, _start(start), count=600, ids=False), "table", got, color=color)
    assert got.getvalue() == expected


@pytest.mark.parametrize(("overrides", "start"), CASES)
def test_a_range_of_rows_without_ids_is_the_table_of_rows_with_them(overrides: dict[str, Any], start: str) -> None:
    spec = _spec(overrides)
    lo = _start(start)
    hi = lo + timedelta(days=3)
    expected = render(build_preview(spec, lo, until=hi), "table")
    got = io.StringIO()
    write(stream_preview(spec, lo, until=hi, ids=False), "table", got)
    assert got.getvalue() == expected


def test_only_the_table_goes_without_ids() -> None:
    assert [needs_ids(fmt) for fmt in ("table", "json", "csv", "ics")] == [False, True, True, True]


def test_rows_without_ids_hold_none_unless_they_collide() -> None:
    """02:00 and 02:30 moved out of the spring gap land on 03:00: the three rows get their ids (the
    losers' reasons name the winner's); every other row of the plain fast path has none."""
    compiled = compile_schedule(_spec({"rule": "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=0,30", "gapPolicy": "SHIFT_FORWARD"}))
    rows = list(itertools.islice(iter_rows(compiled, _start("2026-03-07"), ids=False), 12))
    with_ids = list(itertools.islice(iter_rows(compiled, _start("2026-03-07")), 12))
    losers = [row for row in with_ids if row.status.value == "SKIPPED_DUPLICATE"]
    assert len(losers) == 2  # 02:00 and 02:30, both moved to 03:00
    winner = next(row for row in with_ids if row.occurrence_id in (losers[0].reason or ""))
    assert winner.position == losers[0].position == losers[1].position
    for mine, theirs in zip(rows, with_ids, strict=True):
        if theirs.position == winner.position:
            assert (mine.occurrence_id, mine.logical_slot_id, mine.reason) == (
                theirs.occurrence_id,
                theirs.logical_slot_id,
                theirs.reason,
            )
        else:
            assert (mine.occurrence_id, mine.logical_slot_id) == ("", None)
            assert theirs.occurrence_id.startswith("occ-")


@pytest.mark.parametrize(
    "overrides", [{"rule": "FREQ=DAILY;BYHOUR=9", "jitter": "PT5M"}, {"businessPeriod": "{nominal:%Y-%m}"}]
)
def test_rows_keep_their_ids_where_what_the_table_shows_depends_on_them(overrides: dict[str, Any]) -> None:
    compiled = compile_schedule(_spec(overrides))
    rows = list(itertools.islice(iter_rows(compiled, _start("2026-03-01"), ids=False), 20))
    assert rows and all(row.occurrence_id.startswith("occ-") for row in rows)
