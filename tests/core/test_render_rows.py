"""Rows written by hand around the C encoder are the bytes ``json.dumps(..., indent=2)`` wrote;
free texts (reasons, business periods) with quotes, backslashes, controls and bidi overrides
read back unchanged, and on a terminal cannot drive it; the terminal filter runs on free texts
only, never on ids, instants or numbers (counted, not timed); ids hashed from a copied state are
the contract's ids, for schedule ids of any length."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from helpers import make_data
from hypothesis import given, settings
from hypothesis import strategies as st

from core.identity import IdFactory, logical_slot_id, occurrence_id
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, build_preview, transition_json
from core.render import csvfmt, jsonfmt, render, write
from core.render.terminal import terminal_safe
from core.spec.validation import parse_spec
from core.time.formats import fmt_local, fmt_utc
from core.time.zones import format_offset

#: Written out here, not imported: C0 but tab and newline (CR only before LF), DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")
HOSTILE = [
    'say "hi" \\ there',
    "\x1b]0;pwned\x07\x1b[2J",
    "\u202etxt.exe\u2066",
    "line\nbreak\ttab\r\nand\rbare",
    "\x7f\x85\x9b31m",
    "日本語 · é → ②",
]


def _reference(row: Occurrence) -> dict[str, Any]:
    """A row as preview.v1 spelled it before rows were written by hand (the formula, written out)."""
    local = None if row.resolved is None or row.offset is None else (row.resolved + row.offset).replace(tzinfo=None)
    dispatch = None if row.resolved is None else row.resolved + timedelta(seconds=row.dispatch_delay)
    return {
        "occurrenceId": row.occurrence_id,
        "logicalSlotId": row.logical_slot_id,
        "nominalLocal": row.nominal_local,
        "foldOrdinal": row.fold_ordinal,
        "status": row.status.value,
        "resolvedUtc": row.resolved_utc,
        "resolvedLocal": fmt_local(local) + format_offset(row.offset) if local is not None else None,
        "utcOffset": format_offset(row.offset) if local is not None else None,
        "positionUtc": fmt_utc(row.position),
        "reason": row.reason,
        "businessPeriod": row.period,
        "dispatchUtc": fmt_utc(dispatch) if dispatch is not None else None,
    }


def _expected_text(preview: Preview) -> str:
    document = {
        "schema": "preview.v1",
        "scheduleId": preview.spec.schedule_id,
        "revision": preview.spec.revision,
        "timeZone": preview.spec.time_zone,
        "tzdbVersion": preview.tzdb_version,
        "occurrences": [_reference(r) for r in preview.rows],
        "transitions": [transition_json(t) for t in preview.transitions],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


PREVIEWS = [
    pytest.param({"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "foldPolicy": "BOTH"}, "2026-03-01", id="gap_and_fold"),
    pytest.param({"rule": "FREQ=DAILY;BYHOUR=9", "jitter": "PT5M"}, "2026-03-01", id="jitter"),
    pytest.param(
        {
            "rule": "FREQ=DAILY;BYHOUR=9",
            "businessCalendar": {"holidays": ["US-NY"]},
            "holidayPolicy": "NEXT_BUSINESS_DAY",
        },
        "2026-11-20",
        id="business_days",
    ),
    pytest.param({"rule": "FREQ=MINUTELY;INTERVAL=7", "exclude": ["2026-03-08"]}, "2026-03-07", id="excluded"),
    pytest.param(
        {"kind": "interval", "every": "PT45M", "anchor": "2026-10-31T00:00:00Z", "rule": None, "start": None},
        "2026-11-01",
        id="interval_fold",
    ),
]


def _preview(overrides: dict[str, Any], start: str, count: int = 400) -> Preview:
    data = {k: v for k, v in make_data(**overrides).items() if v is not None}
    if data.get("kind") == "interval":
        data = {k: v for k, v in data.items() if k not in ("gapPolicy", "foldPolicy")}
    return build_preview(parse_spec(data), datetime.fromisoformat(start).replace(tzinfo=UTC), count=count)


@pytest.mark.parametrize(("overrides", "start"), PREVIEWS)
def test_json_rows_are_the_bytes_the_indenting_encoder_wrote(overrides: dict[str, Any], start: str) -> None:
    preview = _preview(overrides, start)
    assert render(preview, "json") == _expected_text(preview)


@pytest.mark.parametrize(("overrides", "start"), PREVIEWS)
def test_csv_rows_are_the_reference_values(overrides: dict[str, Any], start: str) -> None:
    preview = _preview(overrides, start)
    parsed = list(csv.DictReader(io.StringIO(render(preview, "csv"))))
    assert parsed == [{k: "" if v is None else str(v) for k, v in _reference(r).items()} for r in preview.rows]


def _csv_writers_text(preview: Preview, safe: bool) -> str:
    """The rows as :mod:`csv`'s writer writes them (how the CSV was written before its template)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(csvfmt.COLUMNS)
    for row in preview.rows:
        values = list(row.json_values())
        if safe:
            values[9:11] = [terminal_safe(v) if v else v for v in values[9:11]]
        writer.writerow(values)
    return buf.getvalue()


#: Rows with every kind of value: skipped and repeated readings (no resolved time), a fold's second.
_MIXED = _preview(
    {"rule": "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30", "foldPolicy": "BOTH", "jitter": "PT1M"}, "2026-03-07", 8
)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.one_of(st.none(), st.text(), st.sampled_from(HOSTILE)), min_size=16, max_size=16),
    safe=st.booleans(),
)
def test_csv_rows_are_the_csv_writers_bytes(texts: list[str | None], safe: bool) -> None:
    """Any reason and business period, quotes, commas and line breaks among them: the same bytes."""
    preview = copy.copy(_MIXED)
    preview.rows = [replace(row, reason=texts[2 * i], period=texts[2 * i + 1]) for i, row in enumerate(_MIXED.rows)]
    assert {row.status.value for row in preview.rows} >= {"SCHEDULED", "SKIPPED_GAP"}
    buf = io.StringIO()
    csvfmt.write_csv(preview, buf, safe=safe)
    assert buf.getvalue() == _csv_writers_text(preview, safe)


def _hostile_preview() -> Preview:
    preview = _preview({"rule": "FREQ=DAILY;BYHOUR=9"}, "2026-01-01", count=len(HOSTILE))
    preview.rows = [
        replace(row, reason=text, period=text[::-1]) for row, text in zip(preview.rows, HOSTILE, strict=True)
    ]
    return preview


def test_hostile_free_texts_read_back_and_cannot_drive_a_terminal() -> None:
    preview = _hostile_preview()
    assert render(preview, "json") == _expected_text(preview)
    for fmt in ("json", "csv", "table"):
        buf = io.StringIO()
        write(preview, fmt, buf, safe=True)
        assert not UNSAFE.search(buf.getvalue()), fmt
        if fmt == "json":
            rows = json.loads(buf.getvalue())["occurrences"]
            assert [r["reason"] for r in rows] == HOSTILE
            assert [r["businessPeriod"] for r in rows] == [t[::-1] for t in HOSTILE]


@pytest.mark.parametrize(("fmt", "module"), [("json", jsonfmt), ("csv", csvfmt)])
def test_the_terminal_filter_reads_free_texts_only(fmt: str, module: Any) -> None:
    """Counted: 300 rows without a reason pass the filter at most once (the head), not once a row."""
    preview = _preview({"rule": "FREQ=DAILY;BYHOUR=9"}, "2026-04-01", count=300)
    assert all(row.reason is None for row in preview.rows)
    with mock.patch.object(module, "terminal_safe", side_effect=lambda text: text) as safe:
        getattr(module, f"write_{fmt}")(preview, io.StringIO(), safe=True)
    assert safe.call_count <= 1
    preview = _hostile_preview()
    with mock.patch.object(module, "terminal_safe", side_effect=lambda text: text) as safe:
        getattr(module, f"write_{fmt}")(preview, io.StringIO(), safe=True)
    assert len(HOSTILE) <= safe.call_count <= 2 * len(HOSTILE) + 1


@pytest.mark.parametrize(
    "schedule_id",
    [
        "daily",
        "a" * 200,  # the canonical prefix spans several hash blocks
        "team.reports_2026-q1",
        "Straße/日本",  # escaped by the canonical form, not by the fast spelling
        'quote"back\\slash',
    ],
)
@pytest.mark.parametrize("revision", [1, 12345])
def test_ids_from_a_copied_hash_are_the_contracts(schedule_id: str, revision: int) -> None:
    ids = IdFactory(schedule_id, revision)
    for nominal, fold, resolved in [
        ("2026-03-08T02:30:00", 0, "2026-03-08T07:00:00Z"),
        ("2026-11-01T01:30:00", 1, "2026-11-01T06:30:00Z"),
        ("9999-12-31T23:59:59", 0, "9999-12-31T23:59:59Z"),
    ]:
        assert ids.occurrence(nominal, fold) == occurrence_id(schedule_id, revision, nominal, fold)
        assert ids.slot(resolved) == logical_slot_id(schedule_id, resolved)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 3, 8, 2, 30),
        datetime(2026, 3, 8, 2, 30, 15),
        datetime(995, 1, 2, 3, 4, 5),  # before year 1000 strftime writes fewer digits
        datetime(9999, 12, 31, 23, 59, 59, 999),
        datetime(2026, 11, 1, 6, 30, tzinfo=UTC),
    ],
)
def test_table_times_are_the_strftime_texts(moment: datetime) -> None:
    from core.render.table import _day_and_clock
    from core.time.formats import fmt_clock

    assert _day_and_clock(moment) == f"{moment:%Y-%m-%d} {fmt_clock(moment)}"


@pytest.mark.parametrize(("overrides", "start"), PREVIEWS)
def test_table_cells_from_the_rows_texts_are_the_computed_ones(overrides: dict[str, Any], start: str) -> None:
    """The table slices a row's local time and instant from the texts the row holds: a SCHEDULED row
    runs at its nominal wall time, and the texts give what formatting the times gives (the common
    row's cells, made in one step, too)."""
    from core.render import table

    preview = _preview(overrides, start)
    assert all(row.resolved_local == row.nominal for row in preview.rows if row.status.value == "SCHEDULED")
    computed, general = table._day_and_clock, table._safe_cells
    with (
        mock.patch.object(table, "_day_and_clock", side_effect=lambda dt, text=None: computed(dt)) as slow,
        mock.patch.object(table, "_table_cells", side_effect=general),
    ):
        expected = render(preview, "table")
    assert slow.call_count >= len(preview.rows)
    assert render(preview, "table") == expected


@settings(max_examples=300, deadline=None)
@given(
    cells=st.lists(st.text(), min_size=5, max_size=5),
    extra=st.lists(st.integers(0, 6), min_size=4, max_size=4),
    colour=st.sampled_from([None, "\x1b[2;37m", "\x1b[38;5;214m"]),
)
def test_a_table_line_from_its_blocks_format_is_the_padded_line(
    cells: list[str], extra: list[int], colour: str | None
) -> None:
    """The table pads a block's rows with one format of its widths: the line ``ljust`` and a join wrote."""
    from core.render import table

    widths = [len(cell) + more for cell, more in zip(cells, extra, strict=False)]
    assert table._line_format(widths, colour).format(*cells).rstrip() == table._line(cells, widths, colour)
