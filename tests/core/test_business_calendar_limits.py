"""What a business calendar may close, and what validating it costs.

Validation refuses exactly the calendars whose expansion would stop: a run of more
closed days in a row (closed dates, the weekend and holidays, less ``open``) than a
move looks through, under a policy that moves. ``closed`` and ``open`` list at most
MAX_CALENDAR_DATES dates each, refused beyond in one line, and the work of checking
them grows linearly: counted here in operations, never timed. A stored revision is
parsed once per process, however many readers ask."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from helpers import make_data
from hypothesis import given, settings
from hypothesis import strategies as st

from core.calendar.business_days import SEARCH_DAYS, BusinessDays, longest_closure
from core.enums import HolidayPolicy
from core.errors import ComputeLimitError, SpecError
from core.ledger import compiled as compiled_module
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.spec import model as spec_module
from core.spec.canonical import canonical_dict
from core.spec.model import MAX_CALENDAR_DATES, BusinessCalendar
from core.spec.validation import parse_spec

MONDAY = date(2027, 3, 1)


def _days(first: date, count: int, *, weekdays_only: bool = False) -> list[str]:
    days = (first + timedelta(days=i) for i in range(count))
    return [d.isoformat() for d in days if not weekdays_only or d.weekday() < 5]


def _data(closed: list[str], policy: str = "NEXT_BUSINESS_DAY", **calendar: Any) -> dict[str, Any]:
    return make_data(
        timeZone="UTC",
        rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        start="2027-01-01T00:00:00",
        businessCalendar={"closed": closed, **calendar},
        holidayPolicy=policy,
    )


def _problems(data: dict[str, Any]) -> list[str]:
    try:
        parse_spec(data)
    except SpecError as exc:
        return exc.lines()
    return []


REFUSAL = (
    "businessCalendar.closed: closes more than 400 days in a row from {first} (with the weekend and holidays); "
    "a run is moved at most 400 days to a business day, so close at most 400 days in a row, "
    "or use holidayPolicy SKIP"
)

NO_WEEKEND: dict[str, Any] = {"weekend": []}
CASES = [
    pytest.param(_days(MONDAY, 400), "NEXT_BUSINESS_DAY", NO_WEEKEND, None, id="400_days_next"),
    pytest.param(_days(MONDAY, 401), "NEXT_BUSINESS_DAY", NO_WEEKEND, "2027-03-01", id="401_days_next"),
    pytest.param(_days(MONDAY, 401), "PREVIOUS_BUSINESS_DAY", NO_WEEKEND, "2027-03-01", id="401_days_previous"),
    pytest.param(_days(MONDAY, 399), "NEXT_BUSINESS_DAY", {}, "2027-02-27", id="399_days_and_the_weekend_before"),
    pytest.param(_days(MONDAY, 500), "SKIP", {}, None, id="500_days_skip_moves_nothing"),
    pytest.param(
        _days(MONDAY, 404, weekdays_only=True), "NEXT_BUSINESS_DAY", {}, "2027-02-27", id="weekdays_and_weekends"
    ),
    pytest.param(
        _days(MONDAY, 200) + _days(MONDAY + timedelta(days=201), 300),
        "NEXT_BUSINESS_DAY",
        {},
        None,
        id="one_business_day_between",
    ),
    pytest.param(
        _days(MONDAY, 200) + _days(MONDAY + timedelta(days=201), 300),
        "NEXT_BUSINESS_DAY",
        {"weekend": ["FR", "SA", "SU"]},
        "2027-02-26",
        id="the_day_between_is_a_friday_weekend_day",
    ),
]


@pytest.mark.parametrize(("closed", "policy", "more", "first"), CASES)
def test_a_calendar_no_move_can_serve_is_refused_naming_the_key(
    closed: list[str], policy: str, more: dict[str, Any], first: str | None
) -> None:
    problems = _problems(_data(closed, policy, **more))
    assert problems == ([] if first is None else [REFUSAL.format(first=first)])


@settings(max_examples=40, deadline=None)
@given(length=st.integers(SEARCH_DAYS - 3, SEARCH_DAYS + 3), policy=st.sampled_from(["NEXT", "PREVIOUS"]))
def test_refused_exactly_when_expansion_would_stop(length: int, policy: str) -> None:
    """The oracle is the expansion itself: a daily rule over the whole run, parsed as a
    stored revision is (without the check), stops exactly when validation refuses."""
    data = _data(_days(MONDAY, length), f"{policy}_BUSINESS_DAY", weekend=[])
    refused = bool(_problems(data))
    stored = parse_spec(data, check_rule=False)
    lo = datetime(2027, 2, 20, tzinfo=UTC)
    try:
        expand(compile_schedule(stored), lo, lo + timedelta(days=length + 20))
    except ComputeLimitError:
        stopped = True
    else:
        stopped = False
    assert refused == stopped == (length > SEARCH_DAYS)


@pytest.mark.parametrize(
    ("key", "count", "refused"),
    [("closed", MAX_CALENDAR_DATES, False), ("closed", MAX_CALENDAR_DATES + 1, True), ("open", 59_850, True)],
)
def test_at_most_so_many_dates_in_one_line(key: str, count: int, refused: bool) -> None:
    dates = _days(date(2000, 1, 1), count)
    calendar: dict[str, Any] = {"closed": [], "open": []} | {key: dates}
    data = _data(calendar.pop("closed"), "SKIP", **calendar)
    expected = [f"businessCalendar.{key}: lists {count:,} dates; at most 3,660 (every day of ten years) are taken"]
    assert _problems(data) == (expected if refused else [])


class Counted:
    """A value that counts the comparisons and hashes made of it."""

    calls = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        Counted.calls += 1
        return isinstance(other, Counted) and other.value == self.value

    def __hash__(self) -> int:
        Counted.calls += 1
        return hash(self.value)


@pytest.mark.parametrize("n", [1_000, 4_000])
def test_finding_a_date_listed_twice_is_linear(n: int) -> None:
    values = [Counted(i) for i in range(n)] + [Counted(0)]
    Counted.calls = 0
    assert [v.value for v in spec_module._twice(values)] == [0]
    assert Counted.calls <= 3 * (n + 1)


@pytest.mark.parametrize("years", [2, 8])
def test_looking_for_a_long_closure_is_linear(years: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every weekday closed for years, but for one business day every 250 weekdays: each day is
    looked at a bounded number of times."""
    span = 365 * years
    closed = [d for i, d in enumerate(_days(date(2030, 1, 1), span, weekdays_only=True)) if i % 250 != 249]
    days = BusinessDays(BusinessCalendar.model_validate({"closed": closed}), HolidayPolicy.NEXT_BUSINESS_DAY)
    looked = 0
    is_business_day = BusinessDays.is_business_day

    def counted(self: BusinessDays, day: date) -> bool:
        nonlocal looked
        looked += 1
        return is_business_day(self, day)

    monkeypatch.setattr(BusinessDays, "is_business_day", counted)
    assert longest_closure(days) is None
    assert looked <= 3 * span


def test_a_stored_revision_is_parsed_once_however_many_readers_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _data(_days(MONDAY, 3000), "SKIP")
    text = json.dumps(canonical_dict(parse_spec(data)))
    parsed = 0
    parse = compiled_module.parse_spec

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal parsed
        parsed += 1
        return parse(*args, **kwargs)

    monkeypatch.setattr(compiled_module, "parse_spec", counted)
    compiled_module.forget_compiled()
    for _ in range(3):
        compiled_module.stored_spec(text)
        compiled_module.compiled_revision(text)
    assert parsed == 1
