"""The occurrence rows materialization builds are the rows the general conversion stores.

:func:`core.ledger.occurrence_rows.build_rows` writes SQLite's rows straight from an expansion
(an instant's text taken from the text the expansion made of it, a row's position and due time
reusing it): for rules across real clock changes, with jitter, gaps and folds, they equal the
rows :func:`~core.ledger.occurrence_rows.stored_rows` converts from the datetimes, which
``test_recovery_cost.py`` holds to what SQLAlchemy's own binding stores.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ledger.occurrence_rows import COLUMNS, DUE, POSITION, RESOLVED, STATE, build_rows, stored_rows
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.spec.validation import parse_spec

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "rows",
    "revision": 3,
    "kind": "calendar",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SHIFT_FORWARD",
    "foldPolicy": "FIRST_ONLY",
    "task": {"argv": ["/bin/true"]},
}


def _rows(start: datetime, count: int, **spec: Any) -> list[Any]:
    compiled = compile_schedule(parse_spec({**BASE, **spec}))
    return list(itertools.islice(iter_rows(compiled, start), count))


def _both_ways(rows: list[Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    built = build_rows(rows, 3, "2026a", NOW, "0.62", text=True)
    plain = build_rows(rows, 3, "2026a", NOW, "0.62", text=False)
    return built, stored_rows([dict(zip(COLUMNS, r, strict=True)) for r in plain], text=True)


CASES = [
    pytest.param(
        {"timeZone": "America/New_York", "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "gapPolicy": "SKIP"},
        datetime(2026, 3, 5, tzinfo=UTC),
        id="new_york_spring_gap_skip",
    ),
    pytest.param(
        {"timeZone": "America/New_York", "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "gapPolicy": "SHIFT_FORWARD"},
        datetime(2026, 3, 5, tzinfo=UTC),
        id="new_york_spring_gap_shift",
    ),
    pytest.param(
        {"timeZone": "Europe/London", "rule": "FREQ=HOURLY;BYMINUTE=30", "foldPolicy": "BOTH"},
        datetime(2026, 10, 24, 22, tzinfo=UTC),
        id="london_fall_fold_both",
    ),
    pytest.param(
        {"timeZone": "Australia/Lord_Howe", "rule": "FREQ=MINUTELY;INTERVAL=15", "foldPolicy": "SECOND_ONLY"},
        datetime(2026, 4, 4, 14, tzinfo=UTC),
        id="lord_howe_30min_fold",
    ),
    pytest.param(
        {"timeZone": "UTC", "rule": "FREQ=MINUTELY", "jitter": "PT45S"},
        datetime(2026, 3, 1, tzinfo=UTC),
        id="minutely_with_jitter",
    ),
]


@pytest.mark.parametrize(("spec", "start"), CASES)
def test_rows_built_for_sqlite_are_the_rows_converted_from_datetimes(spec: dict[str, Any], start: datetime) -> None:
    built, converted = _both_ways(_rows(start, 200, **spec))
    assert built == converted
    assert len(built) == 200


def test_a_row_formats_one_instant_and_shares_it() -> None:
    """A scheduled row's position and due time (no jitter) are its resolved instant's own text."""
    (row,) = build_rows(
        _rows(datetime(2026, 3, 1, tzinfo=UTC), 1, timeZone="UTC", rule="FREQ=HOURLY"), 1, "", NOW, None, text=True
    )
    assert row[RESOLVED] == "2026-03-01 00:00:00.000000"
    assert row[POSITION] is row[RESOLVED] and row[DUE] is row[RESOLVED]
    assert row[STATE] == "PLANNED"


ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"]


@settings(max_examples=40, deadline=None)
@given(
    zone=st.sampled_from(ZONES),
    rule=st.sampled_from(["FREQ=MINUTELY;INTERVAL=20", "FREQ=HOURLY;BYMINUTE=30", "FREQ=DAILY;BYHOUR=1,2,3"]),
    gap=st.sampled_from(["SKIP", "SHIFT_FORWARD"]),
    fold=st.sampled_from(["FIRST_ONLY", "BOTH", "SECOND_ONLY"]),
    jitter=st.sampled_from([None, "PT30S", "PT10M"]),
    day=st.integers(min_value=0, max_value=365),
)
def test_built_rows_match_the_conversion_around_the_year(
    zone: str, rule: str, gap: str, fold: str, jitter: str | None, day: int
) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)
    spec = {"timeZone": zone, "rule": rule, "gapPolicy": gap, "foldPolicy": fold}
    if jitter is not None:
        spec["jitter"] = jitter
    built, converted = _both_ways(_rows(start, 80, **spec))
    assert built == converted and len(built) == 80
