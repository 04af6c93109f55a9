"""Finding a holiday code by what a person types: a code (``DE-BE``, ``de_be``), a country
("germany") or a subdivision ("berlin", "new york"), accents and case ignored.

The designer's "Business days" picker lists these matches, best first; the codes and names are
:func:`core.calendar.holiday_codes.known_codes`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import IntEnum
from functools import cache

from core.calendar.holiday_codes import HolidayCode, known_codes


class Fit(IntEnum):
    """How well a code matches the text, best first."""

    CODE = 0
    """The text is the code ("de-be", "US")."""
    NAME = 1
    """The text is the country's or the subdivision's whole name ("berlin", "Germany")."""
    CODE_START = 2
    """The code starts with the text ("DE-", "GB-S")."""
    WORD_START = 3
    """A word of the name starts with the text ("berl", "york", "united st")."""
    INSIDE = 4
    """The text is somewhere in the name ("erlin")."""


@dataclass(frozen=True)
class HolidayMatch:
    code: HolidayCode
    fit: Fit

    @property
    def label(self) -> str:
        """What the picker shows: "Germany: Berlin (DE-BE)"."""
        return f"{self.code.name} ({self.code.code})"


def folded(text: str) -> str:
    """``text`` in lower case without accents, every run of other characters one space."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(re.split(r"[^0-9a-z]+", plain.casefold())).strip()


@cache
def _index() -> tuple[tuple[HolidayCode, str, str, str], ...]:
    """Each code with its folded code, folded whole name and folded own name (the subdivision's, else the
    country's)."""
    return tuple(
        (item, folded(item.code), folded(item.name), folded(item.subdivision or item.country)) for item in known_codes()
    )


def _fit(query: str, code: str, name: str, own: str) -> Fit | None:
    if query == code:
        return Fit.CODE
    if query in (own, name):
        return Fit.NAME
    if code.startswith(query):
        return Fit.CODE_START
    if f" {name}".find(f" {query}") >= 0:
        return Fit.WORD_START
    if query in name:
        return Fit.INSIDE
    return None


def search_codes(text: str, limit: int = 60) -> list[HolidayMatch]:
    """The codes ``text`` finds, best first: by :class:`Fit`, then codes whose country has a name before
    the package's other spellings (``UK`` for ``GB``), countries before their subdivisions, then by name.
    Empty text finds nothing."""
    query = folded(text)
    if not query:
        return []
    found: list[tuple[Fit, bool, bool, str, HolidayCode]] = []
    for item, code, name, own in _index():
        fit = _fit(query, code, name, own)
        if fit is not None:
            alias = item.country == item.code.partition("-")[0]
            found.append((fit, alias, item.subdivision is not None, name, item))
    found.sort(key=lambda entry: entry[:4])
    return [HolidayMatch(entry[-1], entry[0]) for entry in found[:limit]]
