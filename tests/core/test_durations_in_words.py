"""ISO 8601 durations inside sentences are said in words for people; anything else stays."""

from __future__ import annotations

import pytest

from core.time.durations import durations_in_words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("latenessWindow (PT15M)", "latenessWindow (15 min)", id="minutes_in_parentheses"),
        pytest.param("catchUpWindow (P1D); never run late", "catchUpWindow (1 day); never run late", id="day"),
        pytest.param("waits P1DT2H30M then", "waits 1 day 2 h 30 min then", id="mixed"),
        pytest.param("PT1H", "1 h", id="alone"),
        pytest.param("PT0S", "0 s", id="zero"),
        pytest.param("Publish the PTO plan", "Publish the PTO plan", id="word_starting_with_p_stays"),
        pytest.param("occ-P1D-x", "occ-P1D-x", id="inside_an_id_stays"),
        pytest.param("P1M is a month", "P1M is a month", id="months_are_not_durations_here"),
        pytest.param("no duration at all", "no duration at all", id="plain"),
    ],
)
def test_durations_in_words(text: str, expected: str) -> None:
    assert durations_in_words(text) == expected
