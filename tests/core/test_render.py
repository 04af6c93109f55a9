"""Renderers of a preview: table (separators, icons, colour), json, csv and ics."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import icalendar
import pytest
from helpers import make_data, utc

from core.recurrence.preview import Preview, build_preview
from core.render import FORMATS, render
from core.render.csvfmt import COLUMNS, render_csv
from core.render.ics import PRODID, render_ics
from core.render.jsonfmt import render_json
from core.render.table import render_table, transition_line
from core.spec.files import load_spec
from core.spec.validation import parse_spec
from core.time.zones import get_zone, transitions

#: Every case runs through the fast path and the general one (tests/core/conftest.py).
pytestmark = pytest.mark.usefixtures("expansion_path")

STAMP = utc("2026-01-01T00:00:00Z")
ANSI = "\x1b["


def _preview(start: str, count: int = 4, **overrides: Any) -> Preview:
    return build_preview(parse_spec(make_data(**overrides)), utc(start), count=count)


def _lines(text: str) -> list[str]:
    return text.splitlines()


# --- table --------------------------------------------------------------------------------


def test_table_spring_gap_skip() -> None:
    lines = _lines(render_table(_preview("2026-03-06T12:00:00Z", title="Operating summary")))
    assert lines[0] == "Operating summary · daily-ops-summary revision 7 · America/New_York · tzdb " + lines[0][-5:]
    assert lines[1].split() == ["Local", "UTC", "Offset", "Status", "Why"]
    assert lines[2].startswith("Sat 2026-03-07 02:30 EST  2026-03-07 07:30Z  -05:00  ✓ scheduled")
    assert lines[3] == "── clocks jump forward 1 h · 2026-03-08 07:00Z · EST→EDT ──"
    assert lines[4].startswith("Sun 2026-03-08 02:30")
    assert "⊘ skipped (gap)  02:30 does not exist on 2026-03-08 in America/New_York" in lines[4]
    assert lines[5].startswith("Mon 2026-03-09 02:30 EDT  2026-03-09 06:30Z  -04:00  ✓ scheduled")
    assert len(lines) == 7


def test_table_fall_back_separator_between_readings() -> None:
    text = render_table(
        _preview("2026-11-01T05:00:00Z", count=3, rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", foldPolicy="BOTH")
    )
    lines = _lines(text)
    assert lines[2].startswith("Sun 2026-11-01 01:30 EDT  2026-11-01 05:30Z  -04:00  ✓ scheduled")
    assert lines[3] == "── clocks fall back 1 h · 2026-11-01 06:00Z · EDT→EST ──"
    assert lines[4].startswith("Sun 2026-11-01 01:30 EST  2026-11-01 06:30Z  -05:00  ② scheduled")


@pytest.mark.parametrize(
    ("overrides", "start", "expected"),
    [
        pytest.param(
            {"gapPolicy": "SHIFT_FORWARD"},
            "2026-03-08T00:00:00Z",
            "Sun 2026-03-08 03:00 EDT  2026-03-08 07:00Z  -04:00  ↷ shifted",
            id="spring_gap_shift_forward",
        ),
        pytest.param(
            {"gapPolicy": "SHIFT_BY_GAP"},
            "2026-03-08T00:00:00Z",
            "Sun 2026-03-08 03:30 EDT  2026-03-08 07:30Z  -04:00  ↷ shifted",
            id="spring_gap_shift_by_gap",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "SECOND_ONLY"},
            "2026-11-01T00:00:00Z",
            "Sun 2026-11-01 01:30 EDT  —                  —       ⊘ skipped (fold)",
            id="fall_fold_second_only_skips_first",
        ),
        pytest.param(
            {"exclude": ["2026-03-09"]},
            "2026-03-09T00:00:00Z",
            "Mon 2026-03-09 02:30      —                  —       ⊘ excluded",
            id="excluded_day",
        ),
    ],
)
def test_table_status_cells(overrides: dict[str, Any], start: str, expected: str) -> None:
    text = render_table(_preview(start, count=2, **overrides))
    assert any(line.startswith(expected) for line in text.splitlines()), text


def test_table_lord_howe_numeric_abbreviations() -> None:
    zone = get_zone("Australia/Lord_Howe")
    (tr,) = transitions(zone, utc("2026-10-01T00:00:00Z"), utc("2026-10-10T00:00:00Z"))
    assert transition_line(tr) == "── clocks jump forward 30 min · 2026-10-03 15:30Z · UTC+10:30→UTC+11:00 ──"


def test_table_colour_only_when_asked() -> None:
    preview = _preview("2026-03-06T12:00:00Z", gapPolicy="SHIFT_FORWARD")
    assert ANSI not in render_table(preview)
    coloured = render_table(preview, color=True)
    shifted = next(line for line in coloured.splitlines() if "shifted" in line)
    assert "\x1b[38;5;214m↷ shifted" in shifted  # orange
    skipped = render_table(_preview("2026-03-06T12:00:00Z"), color=True)
    assert "\x1b[2;37m⊘ skipped (gap)" in skipped  # dim grey
    fold = render_table(
        _preview("2026-11-01T05:00:00Z", count=2, rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", foldPolicy="BOTH"), color=True
    )
    assert "\x1b[38;5;25m② scheduled" in fold  # blue


def test_table_ascii_fallback() -> None:
    text = render_table(_preview("2026-03-06T12:00:00Z"), unicode=False)
    assert text.isascii()
    assert "-- clocks jump forward 1 h | 2026-03-08 07:00Z | EST>EDT --" in text


def test_table_without_rows() -> None:
    preview = _preview("2026-01-01T00:00:00Z", count=1)
    preview.rows.clear()
    preview.transitions.clear()
    assert render_table(preview).splitlines()[-1] == "No occurrences in this range."


# --- json -----------------------------------------------------------------------------------


def test_json_is_the_contract_object() -> None:
    preview = _preview("2026-03-07T00:00:00Z", count=2)
    data = json.loads(render_json(preview))
    assert data == preview.to_json()
    assert list(data) == ["schema", "scheduleId", "revision", "timeZone", "tzdbVersion", "occurrences", "transitions"]
    assert data["schema"] == "preview.v1"
    assert data["occurrences"][1]["status"] == "SKIPPED_GAP"
    assert data["transitions"] == [
        {
            "utc": "2026-03-08T07:00:00Z",
            "offsetBefore": "-05:00",
            "offsetAfter": "-04:00",
            "kind": "gap",
            "seconds": 3600,
        }
    ]


# --- csv ------------------------------------------------------------------------------------


def test_csv_columns_are_the_json_keys_of_a_row() -> None:
    preview = _preview("2026-03-07T00:00:00Z", count=3)
    assert list(preview.rows[0].to_json()) == list(COLUMNS)
    parsed = list(csv.DictReader(io.StringIO(render_csv(preview))))
    assert len(parsed) == 3
    for row, written in zip(preview.rows, parsed, strict=True):
        expected = {k: "" if v is None else str(v) for k, v in row.to_json().items()}
        assert written == expected
    assert parsed[1]["status"] == "SKIPPED_GAP"
    assert parsed[1]["resolvedUtc"] == ""


def test_csv_header_without_rows() -> None:
    preview = _preview("2026-01-01T00:00:00Z", count=1)
    preview.rows.clear()
    assert render_csv(preview) == ",".join(COLUMNS) + "\n"


# --- ics ------------------------------------------------------------------------------------


def test_ics_round_trip(demo: Callable[[str], str]) -> None:
    preview = build_preview(load_spec(demo("daily-ops-summary")), utc("2026-03-06T12:00:00Z"), count=4)
    text = render_ics(preview, stamp=STAMP)
    cal = icalendar.Calendar.from_ical(text)
    assert str(cal["PRODID"]) == PRODID
    assert str(cal["VERSION"]) == "2.0"
    events = list(cal.walk("VEVENT"))
    runnable = [r for r in preview.rows if r.runnable]
    assert len(runnable) == 3  # the 2026-03-08 gap row is skipped
    assert [str(e["UID"]) for e in events] == [r.occurrence_id for r in runnable]
    assert [e.decoded("DTSTART") for e in events] == [r.resolved for r in runnable]
    assert all(e.decoded("DTSTART").utcoffset().total_seconds() == 0 for e in events)
    assert all(e.decoded("DTSTAMP") == STAMP for e in events)
    assert {str(e["SUMMARY"]) for e in events} == {"Operating summary"}
    assert str(events[0]["DESCRIPTION"]) == (
        "Nominal local time 2026-03-07T02:30:00 in America/New_York.\nBusiness period 2026-03-07."
    )
    assert "DTSTART:20260309T063000Z\r\n" in text


def test_ics_shifted_row_says_why() -> None:
    preview = _preview("2026-03-08T00:00:00Z", count=1, gapPolicy="SHIFT_FORWARD")
    (event,) = icalendar.Calendar.from_ical(render_ics(preview, stamp=STAMP)).walk("VEVENT")
    assert event.decoded("DTSTART") == datetime(2026, 3, 8, 7, 0, tzinfo=UTC)
    assert str(event["SUMMARY"]) == "daily-ops-summary"
    description = str(event["DESCRIPTION"])
    assert description.startswith("Nominal local time 2026-03-08T02:30:00 in America/New_York.\n02:30 does not exist")
    assert "(gapPolicy SHIFT_FORWARD)." in description


# --- dispatch -------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [pytest.param(f, id=f) for f in FORMATS])
def test_render_dispatches_every_format(fmt: str) -> None:
    assert render(_preview("2026-03-07T00:00:00Z", count=2), fmt, stamp=STAMP)


def test_ics_needs_a_stamp() -> None:
    with pytest.raises(ValueError, match="needs a stamp"):
        render(_preview("2026-03-07T00:00:00Z", count=1), "ics")


def test_render_refuses_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render(_preview("2026-03-07T00:00:00Z", count=1), "xml", stamp=STAMP)
