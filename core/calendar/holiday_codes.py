"""The codes of a business calendar's public holidays, and the days each closes.

A code is a country's ISO 3166-1 alpha-2 code (``US``, ``JP``) or a country
and one of its subdivisions (``US-NY``, ``DE-BE``, ``GB-SCT``), as the
``holidays`` package knows them. A code's closed days are the holidays the
package lists for it with its defaults, observed days included; names are in
English where the package has them, else in the country's own language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cache

from core.os_text import shown

CODE = re.compile(r"^([A-Z]{2})(?:-([A-Z0-9]{1,4}))?$")
#: The language names are asked in, when the package has it for a country.
ENGLISH = "en_US"


@dataclass(frozen=True)
class HolidayCode:
    """One code a business calendar may name, with the words a person picks it by."""

    code: str
    country: str
    subdivision: str | None = None

    @property
    def name(self) -> str:
        return self.country if self.subdivision is None else f"{self.country}: {self.subdivision}"


def holidays_version() -> str:
    """The installed ``holidays`` package's version (recorded like the tz database's)."""
    from importlib.metadata import version

    return version("holidays")


@cache
def _country_names() -> dict[str, str]:
    from holidays.registry import COUNTRIES

    names: dict[str, str] = {}
    for module, entry in COUNTRIES.items():
        code = entry[1]
        names[code] = " ".join(
            part.capitalize() if part not in ("and", "of", "the") else part for part in module.split("_")
        )
    return names


@cache
def known_codes() -> tuple[HolidayCode, ...]:
    """Every country and subdivision code, country first, in code order."""
    import holidays

    names = _country_names()
    out: list[HolidayCode] = []
    for country, subdivisions in sorted(holidays.list_supported_countries().items()):
        if len(country) != 2:
            continue
        cls = holidays.country_holidays(country).__class__
        aliases = {code: alias for alias, code in (getattr(cls, "subdivisions_aliases", None) or {}).items()}
        out.append(HolidayCode(country, names.get(country, country)))
        out.extend(
            HolidayCode(f"{country}-{sub}", names.get(country, country), aliases.get(sub, sub)) for sub in subdivisions
        )
    return tuple(out)


@cache
def _by_code() -> dict[str, HolidayCode]:
    return {item.code: item for item in known_codes()}


def code_info(code: str) -> HolidayCode | None:
    """The code's names, or None when the package does not know it."""
    return _by_code().get(code)


def code_problem(code: object) -> str | None:
    """Why ``code`` is not a holiday code, in one line with a "did you mean"; None when it is one."""
    if not isinstance(code, str):
        return f"{shown(code)} is not a holiday code such as US, US-NY or DE-BE"
    if code in _by_code():
        return None
    from difflib import get_close_matches  # a near match, for a code that is wrong

    upper = code.strip().upper().replace("_", "-")
    if upper in _by_code():
        return f"{shown(code)} is not a holiday code; did you mean {upper}? (codes are written in capitals)"
    match = CODE.fullmatch(upper)
    if match is not None and match.group(2) is not None and match.group(1) in _by_code():
        country = match.group(1)
        subs = [item.code for item in known_codes() if item.code.startswith(country + "-")]
        if not subs:
            return f"{shown(code)}: the holidays package has no subdivisions for {country}; use {country}"
        close = get_close_matches(upper, subs, n=3, cutoff=0.5)
        hint = (
            f"did you mean {' or '.join(close)}?"
            if close
            else f"{country} has {', '.join(subs[:12])}" + (", ..." if len(subs) > 12 else "")
        )
        return f"{shown(code)} is not a subdivision the holidays package knows; {hint}"
    close = get_close_matches(upper, list(_by_code()), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"{shown(code)} is not a country or subdivision code of the holidays package (e.g. US, US-NY, DE-BE){hint}"


@cache
def closed_days(code: str, year: int) -> dict[date, str]:
    """The holidays ``code`` closes in ``year``: date -> name (several on one day joined with "; ")."""
    import holidays

    if code_info(code) is None:
        raise ValueError(code_problem(code))
    country, _, subdivision = code.partition("-")
    cls = holidays.country_holidays(country).__class__
    languages = getattr(cls, "supported_languages", ()) or ()
    language = ENGLISH if ENGLISH in languages else None
    days = holidays.country_holidays(country, subdiv=subdivision or None, years=year, language=language)
    return {day: str(name) for day, name in sorted(days.items()) if day.year == year}
