"""Searching for a time zone: exact names, cities, countries (through the tz
database's iso3166.tab and zone1970.tab) and abbreviations by what they mean
at an instant, and which single zone, if any, Enter may take.

Expectations are the tz database's own tables and real zones' rules, read at
fixed instants in January and July.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.time.zone_info import zone_choices
from core.time.zone_search import Rank, ZoneSearch, fold, links, search_zones, zone1970

JANUARY = datetime(2027, 1, 15, 12, 0, tzinfo=UTC)
JULY = datetime(2027, 7, 15, 12, 0, tzinfo=UTC)
ZONES = sorted(c.name for c in zone_choices(JANUARY))


def ranked(found: ZoneSearch, rank: Rank) -> list[str]:
    return [m.name for m in found.matches if m.rank == rank]


@pytest.mark.parametrize(
    "table", ["zoneinfo/iso3166.tab", "zoneinfo/zone1970.tab", "zoneinfo/zone.tab", "zoneinfo/tzdata.zi"]
)
def test_the_tables_come_from_the_tzdata_package(table: str) -> None:
    assert resources.files("tzdata").joinpath(table).is_file()


def test_tables_are_read_from_tzdata() -> None:
    assert links()["Asia/Calcutta"] == "Asia/Kolkata"
    assert links()["Europe/Busingen"] == "Europe/Zurich"
    assert (("DE", "DK", "NO", "SE", "SJ"), "Europe/Berlin", "most of Germany") in zone1970()


@pytest.mark.parametrize(
    ("query", "first", "pick"),
    [
        # Exact names, in any case, and UTC.
        pytest.param("America/New_York", "America/New_York", "America/New_York", id="iana_name"),
        pytest.param("america/new_york", "America/New_York", "America/New_York", id="iana_name_lower_case"),
        pytest.param("America/New York", "America/New_York", "America/New_York", id="iana_name_with_space"),
        pytest.param("UTC", "UTC", "UTC", id="utc"),
        pytest.param("utc", "UTC", "UTC", id="utc_lower_case"),
        pytest.param("Europe/Berlin — CET +01:00", "Europe/Berlin", "Europe/Berlin", id="the_pickers_own_label"),
        pytest.param("Asia/Calcutta", "Asia/Kolkata", "Asia/Kolkata", id="old_name_is_the_current_zone"),
        # Cities: the last part of the name, "_" as space, accents folded.
        pytest.param("new york", "America/New_York", "America/New_York", id="city_words"),
        pytest.param("New_York", "America/New_York", "America/New_York", id="city_underscore"),
        pytest.param("sao paulo", "America/Sao_Paulo", "America/Sao_Paulo", id="city_without_accent"),
        pytest.param("São Paulo", "America/Sao_Paulo", "America/Sao_Paulo", id="city_with_accent"),
        pytest.param("Zürich", "Europe/Zurich", "Europe/Zurich", id="city_umlaut"),
        pytest.param("port au prince", "America/Port-au-Prince", "America/Port-au-Prince", id="city_hyphens"),
        pytest.param("buenos aires", "America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires", id="deep"),
        pytest.param("kolkata", "Asia/Kolkata", "Asia/Kolkata", id="city_kolkata"),
        pytest.param("calcutta", "Asia/Kolkata", "Asia/Kolkata", id="old_city_name_calcutta"),
        pytest.param("kiev", "Europe/Kyiv", "Europe/Kyiv", id="old_city_name_kiev"),
        # Countries: iso3166.tab names and codes, zones from zone1970.tab.
        pytest.param("India", "Asia/Kolkata", "Asia/Kolkata", id="country_india"),
        pytest.param("IN", "Asia/Kolkata", "Asia/Kolkata", id="country_code_in"),
        pytest.param("Japan", "Asia/Tokyo", "Asia/Tokyo", id="country_japan"),
        pytest.param("Norway", "Europe/Oslo", "Europe/Oslo", id="country_shared_zone_by_its_own_name"),
        pytest.param("Côte d'Ivoire", "Africa/Abidjan", "Africa/Abidjan", id="country_typed_apostrophe"),
        pytest.param("Germany", "Europe/Berlin", None, id="country_germany_two_zones"),
        pytest.param("germany", "Europe/Berlin", None, id="country_lower_case"),
        pytest.param("DE", "Europe/Berlin", None, id="country_code_de"),
        pytest.param("United States", "America/New_York", None, id="country_several_zones"),
        pytest.param("Korea", "Asia/Pyongyang", None, id="country_name_before_parentheses"),
        # Abbreviations.
        pytest.param("JST", "Asia/Tokyo", "Asia/Tokyo", id="abbreviation_used_by_one_zone"),
        pytest.param("AEST", "Australia/Brisbane", None, id="abbreviation_of_one_country_several_zones"),
        pytest.param("IST", "Asia/Kolkata", None, id="abbreviation_ist_most_people_first"),
        pytest.param("EST", "America/New_York", None, id="abbreviation_est_most_people_first"),
        pytest.param("PST", "America/Los_Angeles", None, id="abbreviation_pst_its_main_zone_before_manila"),
        pytest.param("CST", "America/Chicago", None, id="abbreviation_cst_its_main_zone_before_shanghai"),
        pytest.param("BST", "Europe/London", None, id="abbreviation_bst_its_main_zone"),
        # Offsets from UTC, as people write them.
        pytest.param("UTC+2", "Africa/Cairo", None, id="offset_utc_plus_2"),
        pytest.param("GMT+1", "Africa/Lagos", None, id="offset_gmt_plus_1_is_ahead_of_utc"),
        pytest.param("+02:00", "Africa/Cairo", None, id="offset_iso"),
        pytest.param("utc-5", "America/New_York", None, id="offset_lower_case_minus"),
        pytest.param("UTC −03:00", "America/Sao_Paulo", None, id="offset_typographic_minus"),
        pytest.param("+05:45", "Asia/Kathmandu", "Asia/Kathmandu", id="offset_of_one_zone"),
        # Words anywhere in name, country or comment.
        pytest.param("melb", "Australia/Melbourne", "Australia/Melbourne", id="only_remaining_match"),
        pytest.param("america/new", "America/New_York", None, id="words_with_slash"),
        pytest.param("indiana", "America/Indiana/Indianapolis", None, id="region_in_the_middle"),
        pytest.param("Eastern", "America/New_York", None, id="word_eastern_most_people_first"),
    ],
)
def test_search_finds_and_enter_picks(query: str, first: str, pick: str | None) -> None:
    found = search_zones(query, JANUARY)
    assert found.names[0] == first
    assert found.pick == pick
    assert found.ambiguous == (pick is None)


@pytest.mark.parametrize("query", ["zzz", "atlantis", "Nowhere/Else", "+25:00", "UTC+5:75"])
def test_nothing_matches(query: str) -> None:
    found = search_zones(query, JANUARY)
    assert found.matches == () and found.pick is None and not found.ambiguous and found.note == ""


def test_blank_lists_every_zone_and_picks_none() -> None:
    found = search_zones("  ", JANUARY)
    assert found.names == ZONES and found.pick is None


def test_india_is_kolkata_before_indiana_and_indian_ocean() -> None:
    found = search_zones("India", JANUARY)
    assert ranked(found, Rank.COUNTRY) == ["Asia/Kolkata"]
    assert "America/Indiana/Indianapolis" in ranked(found, Rank.WORDS)
    assert "Indian/Maldives" in ranked(found, Rank.WORDS)


def test_germany_is_berlin_then_busingen_which_keeps_swiss_time() -> None:
    """zone1970.tab lists DE under Europe/Berlin ("most of Germany") and under
    Europe/Zurich ("Büsingen"); zone.tab's German name for the latter is
    Europe/Busingen. Both are Germany's, so both are listed and Enter waits."""
    found = search_zones("Germany", JANUARY)
    assert [(m.name, m.detail) for m in found.matches] == [
        ("Europe/Berlin", "most of Germany"),
        ("Europe/Busingen", "Büsingen"),
    ]
    assert found.matches[0].label == "Europe/Berlin — CET +01:00 · most of Germany"
    assert search_zones("DE", JANUARY).names[:2] == found.names


def test_country_name_and_code_list_the_same_zones() -> None:
    by_name = ranked(search_zones("United States", JANUARY), Rank.COUNTRY)
    assert by_name == ranked(search_zones("US", JANUARY), Rank.COUNTRY)
    assert {"America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles"} <= set(
        by_name
    )
    assert {"America/Anchorage", "Pacific/Honolulu", "America/Indiana/Indianapolis"} <= set(by_name)
    assert len(by_name) == 29


def test_est_in_january_lists_the_zones_on_est_and_says_it_is_ambiguous() -> None:
    found = search_zones("EST", JANUARY)
    zones = ranked(found, Rank.ABBREVIATION)
    assert {"America/New_York", "America/Toronto", "America/Panama", "America/Jamaica", "America/Cancun"} <= set(zones)
    assert "America/Creston" not in zones  # MST all year
    assert all(m.choice.abbreviation == "EST" for m in found.matches if m.rank == Rank.ABBREVIATION)
    assert found.matches[0].label == "America/New_York — EST −05:00"  # the most people first
    assert found.names[1] == "America/Toronto"
    assert found.abbreviation == "EST" and found.pick is None and found.ambiguous
    assert (
        found.note == "EST is an ambiguous abbreviation, used in United States, Canada, Mexico and 6 more: pick a place"
    )


def test_est_in_july_lists_zones_on_est_now_then_those_on_it_in_winter() -> None:
    found = search_zones("EST", JULY)
    zones = [m for m in found.matches if m.rank == Rank.ABBREVIATION]
    now = [m.name for m in zones if not m.detail]
    later = {m.name: m for m in zones if m.detail}
    assert {"America/Panama", "America/Jamaica", "America/Cancun", "America/Cayman"} <= set(now)
    assert "America/New_York" not in now
    assert zones[: len(now)] == [m for m in zones if not m.detail]  # those using it now come first
    assert later["America/New_York"].label == "America/New_York — EDT −04:00 · EST part of the year"


@pytest.mark.parametrize(
    ("now", "using_now", "part_of_the_year"),
    [
        # Ireland's tz rules have negative DST: IST (+01:00) is its standard
        # time in summer, GMT its winter time.
        pytest.param(JANUARY, ["Asia/Kolkata", "Asia/Jerusalem"], ["Europe/Dublin"], id="january_dublin_on_gmt"),
        pytest.param(JULY, ["Asia/Kolkata", "Europe/Dublin"], ["Asia/Jerusalem"], id="july_jerusalem_on_idt"),
    ],
)
def test_ist_is_india_ireland_and_israel(now: datetime, using_now: list[str], part_of_the_year: list[str]) -> None:
    found = search_zones("IST", now)
    zones = [m for m in found.matches if m.rank == Rank.ABBREVIATION]
    assert [m.name for m in zones] == using_now + part_of_the_year
    assert [m.name for m in zones if m.detail == "IST part of the year"] == part_of_the_year
    assert found.note.startswith("IST is an ambiguous abbreviation, used in ")
    assert all(country in found.note for country in ("India", "Israel", "Ireland"))
    dublin = next(m.choice for m in zones if m.name == "Europe/Dublin")
    assert (dublin.abbreviation, dublin.offset) == (
        ("GMT", timedelta(0)) if now == JANUARY else ("IST", timedelta(hours=1))
    )


@pytest.mark.parametrize(
    ("query", "now", "offset", "members", "absent"),
    [
        pytest.param("UTC+2", JANUARY, "+02:00", {"Europe/Kyiv", "Africa/Cairo"}, {"Europe/Berlin"}, id="utc_plus_2"),
        pytest.param("UTC+2", JULY, "+02:00", {"Europe/Berlin", "Europe/Paris"}, {"Europe/Kyiv"}, id="summer"),
        pytest.param("GMT+1", JANUARY, "+01:00", {"Europe/Berlin"}, {"America/Scoresbysund"}, id="gmt_plus_1"),
        pytest.param("+05:30", JANUARY, "+05:30", {"Asia/Kolkata", "Asia/Colombo"}, set(), id="half_hour"),
    ],
)
def test_an_offset_lists_the_zones_at_it_now(query: str, now: datetime, offset: str, members, absent) -> None:
    found = search_zones(query, now)
    zones = ranked(found, Rank.OFFSET)
    assert members <= set(zones) and not absent & set(zones)
    assert all(m.choice.label.split(" ")[-1] == offset for m in found.matches if m.rank == Rank.OFFSET)
    assert found.note.startswith(f"Zones at UTC{offset} on {now:%Y-%m-%d}: pick a place")
    assert found.abbreviation == ""


def test_an_offset_no_zone_is_at_says_so() -> None:
    found = search_zones("UTC+13:13", JANUARY)
    assert found.matches == () and found.note == "No zone is at UTC+13:13 on 2027-01-15"


def test_aest_lists_brisbane_on_it_now_and_sydney_in_its_winter() -> None:
    found = search_zones("AEST", JANUARY)
    assert [m.name for m in found.matches if not m.detail][:2] == ["Australia/Brisbane", "Australia/Lindeman"]
    sydney = next(m for m in found.matches if m.name == "Australia/Sydney")
    assert sydney.label == "Australia/Sydney — AEDT +11:00 · AEST part of the year"


def test_an_abbreviation_of_one_zone_is_still_said_to_be_one() -> None:
    assert search_zones("JST", JANUARY).note == "JST is an abbreviation, used in Japan: pick a place"
    assert search_zones("AEST", JANUARY).note == "AEST is an ambiguous abbreviation, used in Australia: pick a place"


def test_abbreviation_in_lower_case_is_still_the_abbreviation() -> None:
    assert ranked(search_zones("cet", JANUARY), Rank.ABBREVIATION) == ranked(
        search_zones("CET", JANUARY), Rank.ABBREVIATION
    )


def test_old_names_say_so() -> None:
    assert search_zones("calcutta", JANUARY).matches[0].label == "Asia/Kolkata — IST +05:30 · old name Asia/Calcutta"


def test_links_that_are_not_places_are_not_names() -> None:
    """``EST`` is also a tz link (to America/Panama); typed, it is the abbreviation, never that link."""
    found = search_zones("EST", JANUARY)
    assert found.exact is None and found.matches[0].rank == Rank.ABBREVIATION
    assert search_zones("US/Eastern", JANUARY).exact is None


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        pytest.param("São_Paulo", "sao paulo", id="accent_and_underscore"),
        pytest.param("Port-au-Prince", "port au prince", id="hyphens"),
        pytest.param("  NEW   york ", "new york", id="case_and_spaces"),
        pytest.param("Côte d’Ivoire", "cote d'ivoire", id="typographic_apostrophe"),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


@given(st.sampled_from(ZONES))
def test_every_zone_is_picked_by_its_exact_name_in_any_case(name: str) -> None:
    for typed in (name, name.lower(), name.upper()):
        found = search_zones(typed, JANUARY)
        assert found.exact == name and found.pick == name


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzAEIST /_", max_size=12))
def test_pick_is_always_the_first_match_or_none(query: str) -> None:
    found = search_zones(query, JANUARY)
    assert found.pick is None or found.pick == found.names[0]
    assert len(set(found.names)) == len(found.names)
    assert [m.rank for m in found.matches] == sorted(m.rank for m in found.matches)


def test_same_instant_same_answer() -> None:
    assert search_zones("EST", JANUARY) == search_zones("EST", JANUARY)
