"""The zone module: names we accept and refuse, zone data from the tzdata
package, transition facts, offsets, and the fast-path index of wall times
near a change (docs/contract.md §1, §3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import tzdata
from helpers import utc

from core.errors import UserError, ZoneError
from core.recurrence.resolve import candidates
from core.time.zones import (
    available_zones,
    check_zone_name,
    format_offset,
    get_zone,
    is_location_zone,
    next_transition,
    transitions,
    tzdb_version,
    zone_index,
)


def test_tzdb_version_is_the_tzdata_package() -> None:
    assert tzdb_version() == tzdata.IANA_VERSION
    assert len(tzdb_version()) == 5 and tzdb_version()[:4].isdigit()


def test_available_zones_come_from_tzdata() -> None:
    zones = available_zones()
    assert list(zones) == sorted(zones)
    for name in ("America/New_York", "Australia/Lord_Howe", "Antarctica/Troll", "Pacific/Apia", "UTC"):
        assert name in zones
    assert len(zones) > 400


@pytest.mark.parametrize(
    "name",
    [
        "America/New_York",
        "Europe/Berlin",
        "Australia/Lord_Howe",
        "Antarctica/Troll",
        "America/Argentina/Buenos_Aires",
        "America/Indiana/Indianapolis",
        "UTC",
        "Etc/UTC",
    ],
)
def test_location_zones_are_accepted(name: str) -> None:
    assert check_zone_name(name) == name
    assert is_location_zone(name)
    assert get_zone(name).key == name


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        pytest.param("EST", "'EST' is an abbreviation, not a place", id="abbreviation_est"),
        pytest.param("GMT", "'GMT' is an abbreviation", id="abbreviation_gmt"),
        pytest.param("EST5EDT", "'EST5EDT' is an abbreviation", id="posix_style_est5edt"),
        pytest.param("+02:00", "'+02:00' is a raw UTC offset", id="raw_offset"),
        pytest.param("-0500", "'-0500' is a raw UTC offset", id="raw_offset_no_colon"),
        pytest.param("UTC+2", "'UTC+2' is a raw UTC offset", id="utc_plus"),
        pytest.param("GMT-03:30", "'GMT-03:30' is a raw UTC offset", id="gmt_minus"),
        pytest.param("Etc/GMT+5", "'Etc/GMT+5' is a fixed offset", id="etc_gmt_plus_5"),
        pytest.param("Etc/GMT-14", "'Etc/GMT-14' is a fixed offset", id="etc_gmt_minus_14"),
        pytest.param("Mars/Olympus_Mons", "unknown time zone 'Mars/Olympus_Mons'", id="unknown"),
        pytest.param("america/new_york", "did you mean America/New_York?", id="wrong_case"),
        pytest.param("Europe/Berln", "did you mean Europe/Berlin?", id="typo"),
        pytest.param(" Europe/Berlin", "surrounding spaces", id="leading_space"),
        pytest.param("", "expected an IANA time zone name", id="empty"),
    ],
)
def test_unusable_zone_names_are_refused(name: str, fragment: str) -> None:
    with pytest.raises(ZoneError) as info:
        check_zone_name(name)
    assert isinstance(info.value, UserError)
    assert fragment in str(info.value)
    assert "Traceback" not in str(info.value)


@pytest.mark.parametrize("value", [None, 5, ["Europe/Berlin"]])
def test_non_text_zone_is_refused(value: object) -> None:
    with pytest.raises(ZoneError):
        check_zone_name(value)


def test_get_zone_is_cached_and_named() -> None:
    assert get_zone("Europe/Dublin") is get_zone("Europe/Dublin")
    assert str(get_zone("Europe/Dublin")) == "Europe/Dublin"


# utc, offset before, offset after, abbreviation before, after, kind, seconds
TRANSITION_FACTS = [
    pytest.param("America/New_York", "2026-03-08T07:00:00Z", "-05:00", "-04:00", "EST", "EDT", "gap", 3600,
                 id="new_york_spring_2026"),
    pytest.param("America/New_York", "2026-11-01T06:00:00Z", "-04:00", "-05:00", "EDT", "EST", "fold", 3600,
                 id="new_york_fall_2026"),
    pytest.param("Australia/Lord_Howe", "2026-10-03T15:30:00Z", "+10:30", "+11:00", "+1030", "+11", "gap", 1800,
                 id="lord_howe_30min_gap"),
    pytest.param("Australia/Lord_Howe", "2026-04-04T15:00:00Z", "+11:00", "+10:30", "+11", "+1030", "fold", 1800,
                 id="lord_howe_30min_fold"),
    pytest.param("Antarctica/Troll", "2026-03-29T01:00:00Z", "+00:00", "+02:00", "+00", "+02", "gap", 7200,
                 id="troll_2h_gap"),
    pytest.param("Pacific/Apia", "2011-12-30T10:00:00Z", "-10:00", "+14:00", "-10", "+14", "gap", 86400,
                 id="apia_skipped_day"),
    pytest.param("Pacific/Kwajalein", "1993-08-21T12:00:00Z", "-12:00", "+12:00", "-12", "+12", "gap", 86400,
                 id="kwajalein_skipped_day"),
    pytest.param("Pacific/Kiritimati", "1994-12-31T10:00:00Z", "-10:00", "+14:00", "-10", "+14", "gap", 86400,
                 id="kiritimati_skipped_day"),
    pytest.param("Europe/Dublin", "2026-10-25T01:00:00Z", "+01:00", "+00:00", "IST", "GMT", "fold", 3600,
                 id="dublin_negative_dst"),
    pytest.param("Europe/Volgograd", "2020-12-26T22:00:00Z", "+04:00", "+03:00", "+04", "MSK", "fold", 3600,
                 id="volgograd_not_dst"),
    pytest.param("America/Caracas", "2016-05-01T07:00:00Z", "-04:30", "-04:00", "-0430", "-04", "gap", 1800,
                 id="caracas_not_dst"),
    pytest.param("America/Santiago", "2025-04-06T03:00:00Z", "-03:00", "-04:00", "-03", "-04", "fold", 3600,
                 id="santiago_midnight"),
    pytest.param("America/Goose_Bay", "2010-03-14T04:01:00Z", "-04:00", "-03:00", "AST", "ADT", "gap", 3600,
                 id="goose_bay_one_minute_past_midnight"),
    pytest.param("America/New_York", "1883-11-18T17:00:00Z", "-04:56:02", "-05:00", "LMT", "EST", "fold", 238,
                 id="new_york_end_of_local_mean_time"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "at", "before", "after", "abbr_before", "abbr_after", "kind", "seconds"), TRANSITION_FACTS
)
def test_transition_facts(
    zone: str, at: str, before: str, after: str, abbr_before: str, abbr_after: str, kind: str, seconds: int
) -> None:
    instant = utc(at)
    found = transitions(get_zone(zone), instant - timedelta(days=3), instant + timedelta(days=3))
    assert len(found) == 1
    (tr,) = found
    assert (tr.utc, format_offset(tr.offset_before), format_offset(tr.offset_after)) == (instant, before, after)
    assert (tr.abbr_before, tr.abbr_after, tr.kind, tr.seconds) == (abbr_before, abbr_after, kind, seconds)
    assert next_transition(get_zone(zone), instant - timedelta(days=30)) == tr
    assert next_transition(get_zone(zone), instant) == tr  # "at or after"


@pytest.mark.parametrize(
    ("zone", "start", "end"),
    [
        pytest.param("America/Sao_Paulo", "2019-02-18T00:00:00Z", "2026-11-01T00:00:00Z", id="brazil_since_2019"),
        pytest.param("America/Mexico_City", "2022-10-31T00:00:00Z", "2026-11-01T00:00:00Z", id="mexico_since_2022"),
        pytest.param("Asia/Amman", "2022-02-26T00:00:00Z", "2026-11-01T00:00:00Z", id="jordan_since_2022"),
        pytest.param("Europe/Istanbul", "2016-03-28T00:00:00Z", "2026-11-01T00:00:00Z", id="turkey_since_2016"),
        pytest.param("America/Asuncion", "2024-10-07T00:00:00Z", "2026-11-01T00:00:00Z", id="paraguay_since_2024"),
        pytest.param("UTC", "1970-01-01T00:00:00Z", "2040-01-01T00:00:00Z", id="utc"),
    ],
)
def test_zones_that_stopped_changing_have_no_transitions(zone: str, start: str, end: str) -> None:
    assert transitions(get_zone(zone), utc(start), utc(end)) == []


def test_transitions_of_a_year() -> None:
    found = transitions(get_zone("Europe/Berlin"), utc("2026-01-01T00:00:00Z"), utc("2027-01-01T00:00:00Z"))
    assert [(t.utc, t.kind, t.abbr_before, t.abbr_after) for t in found] == [
        (utc("2026-03-29T01:00:00Z"), "gap", "CET", "CEST"),
        (utc("2026-10-25T01:00:00Z"), "fold", "CEST", "CET"),
    ]
    tr = found[0]
    assert (tr.local_before, tr.local_after) == (datetime(2026, 3, 29, 2, 0), datetime(2026, 3, 29, 3, 0))


def test_transitions_range_is_half_open() -> None:
    zone = get_zone("America/New_York")
    at = utc("2026-03-08T07:00:00Z")
    assert len(transitions(zone, at, at + timedelta(hours=1))) == 1
    assert transitions(zone, at - timedelta(hours=1), at) == []


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "+00:00", id="zero"),
        pytest.param(19800, "+05:30", id="india"),
        pytest.param(20700, "+05:45", id="nepal"),
        pytest.param(-12600, "-03:30", id="newfoundland"),
        pytest.param(-17762, "-04:56:02", id="local_mean_time_seconds"),
        pytest.param(50400, "+14:00", id="line_islands"),
    ],
)
def test_format_offset(seconds: int, text: str) -> None:
    assert format_offset(timedelta(seconds=seconds)) == text


def test_format_offset_of_none_is_empty() -> None:
    assert format_offset(None) == ""


# --- the index that sends wall times far from any change down a fast path ---------------


@pytest.mark.parametrize(
    ("zone", "at"),
    [pytest.param(p.values[0], p.values[1], id=p.id) for p in TRANSITION_FACTS]
    + [
        pytest.param("Pacific/Fakaofo", "2011-12-30T11:00:00Z", id="fakaofo_skipped_day"),
        pytest.param("Pacific/Kanton", "1994-12-31T11:00:00Z", id="kanton_skipped_day"),
        pytest.param("Pacific/Kiritimati", "1979-10-01T10:40:00Z", id="kiritimati_40min"),
        pytest.param("America/Havana", "2025-03-09T05:00:00Z", id="havana_midnight_gap"),
        pytest.param("America/Havana", "2025-11-02T05:00:00Z", id="havana_midnight_fold"),
        pytest.param("Asia/Beirut", "2025-10-25T21:00:00Z", id="beirut_midnight_fold"),
    ],
)
def test_zone_index_flags_every_ambiguous_or_missing_wall_time(zone: str, at: str) -> None:
    """Every wall time within a day of the change that does not have exactly one
    instant must be flagged as near a change (else it would be resolved blindly)."""
    tz = get_zone(zone)
    index = zone_index(zone)
    instant = utc(at)
    off = instant.astimezone(tz).utcoffset()
    assert off is not None
    centre = (instant + off).replace(tzinfo=None)
    step = timedelta(minutes=1)
    local = centre - timedelta(hours=30)
    irregular = 0
    while local < centre + timedelta(hours=30):
        if len(candidates(tz, local)) != 1:
            irregular += 1
            assert index.near_change(local), local
        local += step
    assert irregular > 0


def test_zone_index_leaves_ordinary_days_alone() -> None:
    index = zone_index("Europe/Berlin")
    assert not index.near_change(datetime(2026, 6, 15, 12, 0))
    assert not index.near_change(datetime(2026, 1, 15, 12, 0))
    assert index.near_change(datetime(2026, 3, 29, 2, 30))


def test_zone_index_across_year_boundaries() -> None:
    # Pacific/Apia's skipped day is two days before a new year.
    index = zone_index("Pacific/Apia")
    for hour in range(24):
        assert index.near_change(datetime(2011, 12, 30, hour, 0))


def test_instants_are_utc() -> None:
    tr = next_transition(get_zone("Europe/London"), datetime(2026, 1, 1, tzinfo=UTC))
    assert tr is not None
    assert tr.utc.tzinfo is not None and tr.utc.utcoffset() == timedelta(0)
