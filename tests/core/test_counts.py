"""Counts in words: the noun agrees with the number, thousands are separated."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.counts import counted, times


@pytest.mark.parametrize(
    ("n", "one", "many", "expected"),
    [
        pytest.param(0, "run", None, "0 runs", id="zero_is_plural"),
        pytest.param(1, "run", None, "1 run", id="one_is_singular"),
        pytest.param(2, "attempt", None, "2 attempts", id="two"),
        pytest.param(12_345, "occurrence", None, "12,345 occurrences", id="thousands_separated"),
        pytest.param(1, "drifted run", None, "1 drifted run", id="two_words"),
        pytest.param(3, "entry", "entries", "3 entries", id="irregular_plural"),
    ],
)
def test_counted(n: int, one: str, many: str | None, expected: str) -> None:
    assert counted(n, one, many) == expected


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, "once"), (2, "twice"), (3, "3 times"), (1_000, "1,000 times")],
    ids=["once", "twice", "three", "thousand"],
)
def test_times(n: int, expected: str) -> None:
    assert times(n) == expected


@given(st.integers(min_value=0, max_value=10**9))
def test_never_one_with_a_plural_nor_many_with_a_singular(n: int) -> None:
    text = counted(n, "schedule")
    assert text.endswith("schedules") == (n != 1)
    assert text.replace(",", "").startswith(f"{n} ")
