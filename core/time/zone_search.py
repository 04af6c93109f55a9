"""Finding a time zone from what a person types: an IANA name, a city, a
country or an abbreviation.

The answer is ranked by how exactly the query names a zone:

1. the IANA name itself in any case ("america/new_york"), an old name of it
   from the tz database's links ("Asia/Calcutta"), or "UTC";
2. a city, the last part of a name with spaces for "_" and without accents
   ("new york", "sao paulo", "zurich"), old city names included ("calcutta");
3. a country's name or ISO code from ``iso3166.tab``, mapped to its zones by
   ``zone1970.tab`` ("India" → Asia/Kolkata; "Germany" → Europe/Berlin, then
   Europe/Busingen for Büsingen, which keeps Swiss time);
4. an abbreviation ("EST", "IST"): the zones using it at the instant ``now``,
   then those using it at another time in the year from ``now``'s day;
5. an offset from UTC ("UTC+2", "GMT+1", "+02:00", "UTC−5:30"): the zones at
   that offset at ``now``. "GMT+1" is one hour *ahead* of UTC, as people write
   it (the tz database's own ``Etc/GMT+1`` is behind, and is not offered);
6. every word of the query found in a zone's name, country or comment.

Within an abbreviation, an offset or words, the zones serving the most people
come first (:data:`MOST_PEOPLE`: "EST" and "Eastern" list America/New_York
first, "IST" Asia/Kolkata), then the others by name.

:attr:`ZoneSearch.pick` is the zone Enter takes: only an exact name, or the
one zone of the best rank. Everything is read from the ``tzdata`` package,
never the operating system; the tables are read once.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import IntEnum
from functools import lru_cache
from importlib import resources

from core.time.zone_info import ZoneChoice, country_names, zone_choices, zone_tab, zone_table
from core.time.zones import format_offset, get_zone, transitions

#: Areas whose names are places; links elsewhere (``US/Eastern``, ``EST``, ``Japan``) are not offered.
_PLACE_AREAS = frozenset(
    ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
)
_UTC_NAMES = frozenset(("utc", "etc/utc"))
#: How many countries an abbreviation's note names before "and N more".
_NOTE_PLACES = 3
#: Zones in the order of roughly how many people live on their clocks (from national and regional
#: censuses, rounded): enough to put an abbreviation's or an offset's main zone first. Zones not
#: listed follow, by name.
MOST_PEOPLE = (
    "Asia/Shanghai",
    "Asia/Kolkata",
    "America/New_York",
    "Asia/Jakarta",
    "America/Chicago",
    "Asia/Karachi",
    "Africa/Lagos",
    "America/Sao_Paulo",
    "Asia/Dhaka",
    "Europe/Moscow",
    "America/Mexico_City",
    "Asia/Tokyo",
    "Africa/Cairo",
    "Asia/Manila",
    "Africa/Addis_Ababa",
    "Asia/Ho_Chi_Minh",
    "Asia/Tehran",
    "Europe/Istanbul",
    "Europe/Berlin",
    "America/Los_Angeles",
    "Asia/Bangkok",
    "Europe/Paris",
    "Europe/London",
    "Africa/Johannesburg",
    "Africa/Kinshasa",
    "Europe/Rome",
    "Africa/Nairobi",
    "Asia/Seoul",
    "America/Bogota",
    "Europe/Madrid",
    "America/Argentina/Buenos_Aires",
    "Africa/Algiers",
    "Asia/Baghdad",
    "America/Denver",
    "Europe/Kyiv",
    "America/Toronto",
    "Europe/Warsaw",
    "Asia/Riyadh",
    "America/Lima",
    "Africa/Casablanca",
    "Asia/Kuala_Lumpur",
    "Asia/Taipei",
    "Australia/Sydney",
    "America/Phoenix",
    "Europe/Bucharest",
    "Europe/Amsterdam",
    "Asia/Jerusalem",
    "Europe/Athens",
    "Europe/Dublin",
    "Pacific/Auckland",
    "America/Halifax",
    "America/Anchorage",
    "Pacific/Honolulu",
)
_PEOPLE = {name: i for i, name in enumerate(MOST_PEOPLE)}
#: Abbreviations that most people who type them mean for one zone, whatever the populations:
#: the North American ones (tzdata's "PST" is also Manila's, "CST" also China's and Cuba's)
#: and the British summer's. That zone comes first; the others follow by people.
MAIN_ZONE = {
    "est": "America/New_York",
    "edt": "America/New_York",
    "cst": "America/Chicago",
    "cdt": "America/Chicago",
    "mst": "America/Denver",
    "mdt": "America/Denver",
    "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles",
    "bst": "Europe/London",
}
#: "UTC+2", "GMT+1", "+02:00", "utc-5:30", "UTC −03" (a typographic minus too).
_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+\-−])\s*(\d{1,2})(?::?(\d{2}))?$")


class Rank(IntEnum):
    """How a zone matched a query; lower is more exact."""

    NAME = 0
    CITY = 1
    COUNTRY = 2
    ABBREVIATION = 3
    OFFSET = 4
    WORDS = 5


@dataclass(frozen=True)
class ZoneMatch:
    """One zone found, read at the search's instant, and why it was found."""

    choice: ZoneChoice
    rank: Rank
    #: What the row adds to the zone's label: "most of Germany", "old name Asia/Calcutta", "EST part of the year".
    detail: str = ""

    @property
    def name(self) -> str:
        return self.choice.name

    @property
    def label(self) -> str:
        """``Europe/Busingen — CET +01:00 · Büsingen``: the zone, its offset now, and the detail."""
        return f"{self.choice.label} · {self.detail}" if self.detail else self.choice.label


@dataclass(frozen=True)
class ZoneSearch:
    """The zones matching one query, best first."""

    query: str
    matches: tuple[ZoneMatch, ...]
    #: The abbreviation the query is, as tzdata spells it ("EST"), else "".
    abbreviation: str = ""
    #: Said above the list: that an abbreviation is not a place, and where it is used.
    note: str = ""

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.matches]

    @property
    def exact(self) -> str | None:
        """The zone the query names exactly (an IANA name, an old name of it, or UTC), else None."""
        return self.matches[0].name if self.matches and self.matches[0].rank == Rank.NAME else None

    @property
    def pick(self) -> str | None:
        """The zone Enter takes: the exact one, or the only zone of the best rank; None when several or none."""
        if not self.matches:
            return None
        best = self.matches[0].rank
        top = [m for m in self.matches if m.rank == best]
        return top[0].name if best == Rank.NAME or len(top) == 1 else None

    @property
    def ambiguous(self) -> bool:
        """Several zones match and none is exact: the person has to choose."""
        return bool(self.matches) and self.pick is None


def fold(text: str) -> str:
    """Text as searches compare it: case-folded, without accents, "_" and "-" as spaces.

    ``fold("São_Paulo") == "sao paulo"``; ``fold("Port-au-Prince") == "port au prince"``.
    """
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    plain = plain.casefold().replace("’", "'").replace("_", " ").replace("-", " ")
    return " ".join(plain.split())


# --- the tz database's tables, read once ---------------------------------------------------


@lru_cache(maxsize=1)
def links() -> dict[str, str]:
    """Old or alternative name → the zone it stands for, from the ``L`` lines of ``tzdata.zi``."""
    text = resources.files("tzdata").joinpath("zoneinfo", "tzdata.zi").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("L "):
            _, target, alias = line.split()
            out[alias] = target
    return out


@lru_cache(maxsize=1)
def zone1970() -> tuple[tuple[tuple[str, ...], str, str], ...]:
    """(country codes, zone, comment) for every row of ``zone1970.tab``, in file order."""
    text = resources.files("tzdata").joinpath("zoneinfo", "zone1970.tab").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            fields = line.split("\t")
            rows.append((tuple(fields[0].split(",")), fields[2], fields[3] if len(fields) > 3 else ""))
    return tuple(rows)


def _city(name: str) -> str:
    return fold(name.rsplit("/", 1)[-1])


@dataclass(frozen=True)
class _Tables:
    """Lookups from folded text to the zones the picker lists (``zone.tab`` and UTC)."""

    names: dict[str, tuple[str, str]]  # folded full name → (zone, old name or "")
    cities: dict[str, list[tuple[str, str]]]  # folded city → [(zone, old name or "")]
    countries: dict[str, list[tuple[str, str]]]  # folded country name or code → [(zone, comment)]
    words: dict[str, str]  # zone → folded text a word search looks in


def _country_zones(code: str, members: frozenset[str]) -> list[tuple[str, str]]:
    """A country's zones by ``zone1970.tab``: rows naming it first, then rows it shares, in file order.

    zone1970 names one zone per set of clocks that agree (Norway's is
    Europe/Berlin); the zone ``zone.tab`` lists for the same clocks in that
    country is shown instead (Europe/Oslo), so a country gets its own names.
    """
    alias = links()
    own = [name for c, name, _ in zone_tab() if c == code]
    rows = sorted(
        (
            (codes.index(code) != 0, i, zone, comment)
            for i, (codes, zone, comment) in enumerate(zone1970())
            if code in codes
        )
    )
    out: dict[str, str] = {}
    for _, _, zone, comment in rows:
        same = [n for n in own if n == zone or alias.get(n) == zone]
        name = zone if zone in same or not same else same[0]
        if name in members:
            out.setdefault(name, comment)
    if len(out) == 1:  # zone1970's comments tell a country's zones apart; one zone needs none
        return [(name, "") for name in out]
    return list(out.items())


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    members = frozenset(name for name, _, _ in zone_table())
    names: dict[str, tuple[str, str]] = {fold(n): (n, "") for n in members}
    for utc in _UTC_NAMES:
        names.setdefault(utc, ("UTC", ""))
    cities: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(members):
        if "/" in name:
            cities.setdefault(_city(name), []).append((name, ""))
    old_names: dict[str, list[str]] = {}
    for alias, target in sorted(links().items()):
        if target not in members or alias in members or alias.split("/", 1)[0] not in _PLACE_AREAS:
            continue
        old_names.setdefault(target, []).append(alias)
        names.setdefault(fold(alias), (target, alias))
        city = cities.setdefault(_city(alias), [])
        if all(zone != target for zone, _ in city):
            city.append((target, alias))
    countries: dict[str, list[tuple[str, str]]] = {}
    for code, country in country_names().items():
        zones = _country_zones(code, members)
        for key in {fold(code), fold(country), fold(country.split(" (", 1)[0])}:
            listed = countries.setdefault(key, [])
            listed.extend(z for z in zones if z not in listed)
    words = {
        name: " ".join(fold(part) for part in (name.replace("/", " "), country, comment, *old_names.get(name, ())))
        for name, country, comment in zone_table()
    }
    return _Tables(names, cities, countries, words)


@lru_cache(maxsize=4)
def _abbreviations(day: date) -> dict[str, tuple[str, frozenset[str]]]:
    """Folded abbreviation → (tzdata's spelling, the zones using it) in the 367 days from ``day``."""
    start = datetime.combine(day, time(), UTC)
    end = start + timedelta(days=367)
    found: dict[str, tuple[str, set[str]]] = {}
    for name, _, _ in zone_table():
        zone = get_zone(name)
        used = {start.astimezone(zone).tzname() or ""} | {t.abbr_after for t in transitions(zone, start, end)}
        for abbreviation in used:
            if abbreviation and abbreviation[0] not in "+-":  # numeric ones repeat the offset
                found.setdefault(abbreviation.casefold(), (abbreviation, set()))[1].add(name)
    return {key: (spelling, frozenset(zones)) for key, (spelling, zones) in found.items()}


def _looks_like_abbreviation(query: str) -> bool:
    return 2 <= len(query) <= 6 and query.isascii() and query.isalpha()


def _by_people(names: Iterable[str]) -> list[str]:
    """``names`` with the zones serving the most people first, then the others by name."""
    return sorted(names, key=lambda n: (_PEOPLE.get(n, len(_PEOPLE)), n))


def offset_query(text: str) -> timedelta | None:
    """The offset from UTC a case-folded query names ("utc+2", "gmt+1", "+02:00"), else None."""
    m = _OFFSET.match(text.replace(" ", ""))
    if m is None:
        return None
    hours, minutes = int(m.group(2)), int(m.group(3) or 0)
    if hours > 14 or minutes >= 60:
        return None
    size = timedelta(hours=hours, minutes=minutes)
    return -size if m.group(1) != "+" else size


# --- the search ------------------------------------------------------------------------------


def search_zones(query: str, now: datetime) -> ZoneSearch:
    """The zones matching ``query``, best first, each read at ``now``.

    A blank query lists every zone. The picker's own labels are understood
    too: "Europe/Berlin — CET +01:00" is Europe/Berlin.
    """
    text = query.split(" — ", 1)[0].strip()
    choices = {c.name: c for c in zone_choices(now)}
    if not text:
        return ZoneSearch(query, tuple(ZoneMatch(c, Rank.WORDS) for c in choices.values()))
    tables = _tables()
    folded = fold(text)
    found: dict[str, ZoneMatch] = {}

    def add(rank: Rank, hits: Iterable[tuple[str, str]]) -> None:
        for name, detail in hits:
            if name not in found:
                found[name] = ZoneMatch(choices[name], rank, detail)

    def old(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(zone, f"old name {alias}" if alias else "") for zone, alias in pairs]

    if folded in tables.names:
        add(Rank.NAME, old([tables.names[folded]]))
    add(Rank.CITY, old(tables.cities.get(folded, [])))
    add(Rank.COUNTRY, tables.countries.get(folded, []))
    abbreviation = ""
    if folded not in tables.names and _looks_like_abbreviation(text):  # "UTC" is a zone before an abbreviation
        spelling, users = _abbreviations(now.astimezone(UTC).date()).get(folded, ("", frozenset()))
        if spelling:
            abbreviation = spelling
            main = MAIN_ZONE.get(folded)
            ordered = sorted(_by_people(users), key=lambda n: n != main)
            add(Rank.ABBREVIATION, ((n, "") for n in ordered if choices[n].abbreviation == spelling))
            add(Rank.ABBREVIATION, ((n, f"{spelling} part of the year") for n in ordered))
    offset = offset_query(text.casefold())
    if offset is not None:
        add(Rank.OFFSET, ((n, "") for n in _by_people(n for n, c in choices.items() if c.offset == offset)))
    words = folded.replace("/", " ").split()
    phrase = " ".join(words)
    rest = [n for n, hay in tables.words.items() if n not in found and all(w in hay for w in words)]
    rest.sort(
        key=lambda n: (
            not _city(n).startswith(phrase),
            phrase not in fold(n.replace("/", " ")),
            _PEOPLE.get(n, len(_PEOPLE)),
            n,
        )
    )
    add(Rank.WORDS, ((n, "") for n in rest))
    matches = tuple(found.values())
    if abbreviation:
        note = _abbreviation_note(abbreviation, matches)
    elif offset is not None:
        note = _offset_note(offset, now, matches)
    else:
        note = ""
    return ZoneSearch(query, matches, abbreviation, note)


def _offset_note(offset: timedelta, now: datetime, matches: tuple[ZoneMatch, ...]) -> str:
    """``Zones at UTC+02:00 on 2027-01-15: pick a place (an offset changes with the seasons, a place keeps its
    rules)``, or that none is at that offset then."""
    when = f"UTC{format_offset(offset, '−')} on {now.astimezone(UTC):%Y-%m-%d}"
    if not any(m.rank == Rank.OFFSET for m in matches):
        return f"No zone is at {when}"
    return f"Zones at {when}: pick a place (a place keeps its own clock changes; an offset does not)"


def _abbreviation_note(abbreviation: str, matches: tuple[ZoneMatch, ...]) -> str:
    """``IST is an ambiguous abbreviation, used in Israel, India and Ireland: pick a place``.

    The countries with the most zones using it come first; past three, the rest are counted.
    """
    zones = [m for m in matches if m.rank == Rank.ABBREVIATION]
    countries = [m.choice.country for m in zones if m.choice.country]
    places = sorted(dict.fromkeys(countries), key=lambda c: -countries.count(c))
    shown = places[:_NOTE_PLACES]
    more = len(places) - len(shown)
    if more:
        where = f"{', '.join(shown)} and {more} more"
    elif len(shown) > 1:
        where = f"{', '.join(shown[:-1])} and {shown[-1]}"
    else:
        where = "".join(shown)
    kind = "an ambiguous abbreviation" if len(zones) > 1 else "an abbreviation"
    return f"{abbreviation} is {kind}, used in {where}: pick a place" if where else f"{abbreviation} is {kind}"
