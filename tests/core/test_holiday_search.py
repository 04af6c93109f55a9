"""Finding a holiday code by a code, a country or a subdivision (core.calendar.holiday_search), as the
designer's "Business days" picker does."""

from __future__ import annotations

import pytest

from core.calendar.holiday_search import Fit, folded, search_codes


def codes(text: str, n: int = 3) -> list[str]:
    return [m.code.code for m in search_codes(text)[:n]]


@pytest.mark.parametrize(
    ("text", "first", "fit"),
    [
        ("DE-BE", "DE-BE", Fit.CODE),
        ("de_be", "DE-BE", Fit.CODE),
        ("berlin", "DE-BE", Fit.NAME),
        ("berl", "DE-BE", Fit.WORD_START),
        ("Germany", "DE", Fit.NAME),
        ("new york", "US-NY", Fit.NAME),
        ("york", "US-NY", Fit.WORD_START),
        ("zurich", "CH-ZH", Fit.NAME),  # accents ignored: Zürich
        ("gb-sc", "GB-SCT", Fit.CODE_START),
        ("jp", "JP", Fit.CODE),
        ("scotland", "GB-SCT", Fit.NAME),
    ],
)
def test_the_best_match_comes_first(text: str, first: str, fit: Fit) -> None:
    [best, *_] = search_codes(text)
    assert (best.code.code, best.fit) == (first, fit)


def test_a_country_comes_before_its_subdivisions_and_they_follow_in_name_order() -> None:
    # by name: Augsburg, Baden-Württemberg, Bayern
    assert codes("DE-", 4) == ["DE", "DE-Augsburg", "DE-BW", "DE-BY"]
    germany = codes("germany", 3)
    assert germany[0] == "DE" and all(c.startswith("DE-") for c in germany[1:])


def test_labels_name_the_place_and_its_code() -> None:
    assert search_codes("DE-BE")[0].label == "Germany: Berlin (DE-BE)"
    assert search_codes("US")[0].label == "United States (US)"


def test_nothing_typed_or_nothing_known_finds_nothing() -> None:
    assert search_codes("") == [] and search_codes("  - ") == []
    assert search_codes("atlantis") == []
    assert len(search_codes("a", limit=5)) == 5


def test_folding_drops_case_accents_and_punctuation() -> None:
    assert folded("Baden-Württemberg") == "baden wurttemberg"
    assert folded("  São  Tomé ") == "sao tome"
