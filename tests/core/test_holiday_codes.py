"""Holiday codes: what a business calendar may name, and the days each closes."""

from __future__ import annotations

from datetime import date

import holidays
import pytest

from core.calendar.holiday_codes import closed_days, code_info, code_problem, holidays_version, known_codes


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("US", "United States"),
        ("US-NY", "United States: New York"),
        ("DE-BE", "Germany: Berlin"),
        ("GB-SCT", "United Kingdom: Scotland"),
        ("JP", "Japan"),
    ],
)
def test_known_codes_carry_names(code: str, name: str) -> None:
    info = code_info(code)
    assert info is not None and info.name == name
    assert code_problem(code) is None


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("us-ny", "did you mean US-NY?"),
        ("US-XX", "not a subdivision"),
        ("DE-BEE", "did you mean DE-BE"),
        ("USA", "did you mean US"),
        ("JP-13", "no subdivisions for JP"),
        ("QQ", "not a country or subdivision code"),
        (5, "not a holiday code"),
        ("", "not a country or subdivision code"),
    ],
)
def test_a_wrong_code_is_named_with_a_hint(code: object, words: str) -> None:
    problem = code_problem(code)
    assert problem is not None and words in problem
    assert "\n" not in problem


def test_every_listed_code_is_valid_and_unique() -> None:
    codes = [item.code for item in known_codes()]
    assert len(codes) == len(set(codes)) > 200
    assert all(code_problem(code) is None for code in codes[::25])


@pytest.mark.parametrize(("code", "year"), [("US-NY", 2027), ("DE-BE", 2026), ("GB-ENG", 2027), ("JP", 2026)])
def test_closed_days_agree_with_the_package(code: str, year: int) -> None:
    country, _, sub = code.partition("-")
    direct = holidays.country_holidays(country, subdiv=sub or None, years=year)
    assert set(closed_days(code, year)) == {d for d in direct if d.year == year}


def test_names_are_english_where_the_package_has_them() -> None:
    assert closed_days("DE-BE", 2027)[date(2027, 12, 25)] == "Christmas Day"
    assert closed_days("US-NY", 2027)[date(2027, 12, 24)] == "Christmas Day (observed)"
    assert holidays_version() == holidays.__version__


def test_an_unknown_code_is_refused() -> None:
    with pytest.raises(ValueError, match="did you mean"):
        closed_days("US-NYC", 2027)
