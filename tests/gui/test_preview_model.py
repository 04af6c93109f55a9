"""The preview table model: rows, separator rows at clock changes, the second zone, statuses and colours."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from gui_support import demo_mapping
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QColor

from core.enums import Status
from core.errors import ZoneError
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, build_preview
from core.spec.validation import parse_spec
from core.time.zones import Transition
from scheduler_gui.preview.model import Column, CopyRole, ItemRole, PreviewModel, merge_rows, transition_words
from scheduler_gui.status_style import BLUE, GREY, ORANGE


@pytest.fixture(autouse=True)
def english() -> None:
    """Weekday names follow the system language; these tests read English ones."""
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(before)


def _preview(name: str, start: str, count: int, **overrides: object) -> Preview:
    data = demo_mapping(name) | overrides
    return build_preview(parse_spec(data), datetime.fromisoformat(start).replace(tzinfo=UTC), count=count)


def _model(preview: Preview | None, qtmodeltester) -> PreviewModel:
    model = PreviewModel()
    model.set_preview(preview)
    qtmodeltester.check(model)
    return model


def _text(model: PreviewModel, row: int, column: Column, role: int = Qt.ItemDataRole.DisplayRole) -> object:
    return model.data(model.index(row, model.column_of(column)), role)


def test_spring_change_separator_sits_between_the_right_rows(qtmodeltester) -> None:
    # New York 2027-03-14: 02:30 does not exist; the change is at 07:00Z, before the skipped row's position.
    model = _model(_preview("daily-ops-summary", "2027-03-12T12:00:00", 4), qtmodeltester)
    assert model.rowCount() == 5
    assert model.separator_rows() == [1]
    assert _text(model, 0, Column.LOCAL) == "Sat 2027-03-13 02:30 EST"
    assert _text(model, 1, Column.NOMINAL) == "── clocks jump forward 1 h · 2027-03-14 07:00Z · EST→EDT ──"
    assert _text(model, 2, Column.NOMINAL) == "Sun 2027-03-14 02:30"
    assert _text(model, 2, Column.LOCAL) == "—"
    assert _text(model, 2, Column.STATUS) == "⊘ skipped: gap"
    assert "02:30 does not exist" in str(_text(model, 2, Column.WHY))
    assert _text(model, 3, Column.LOCAL) == "Mon 2027-03-15 02:30 EDT"
    assert _text(model, 3, Column.UTC) == "2027-03-15 06:30Z"
    assert _text(model, 3, Column.OFFSET) == "−04:00"
    assert isinstance(model.data(model.index(1, 0), ItemRole), Transition)
    assert isinstance(model.data(model.index(3, 0), ItemRole), Occurrence)
    assert model.data(model.index(1, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole) is None


def test_shift_forward_reads_three_o_clock_edt(qtmodeltester) -> None:
    model = _model(_preview("daily-ops-summary", "2027-03-13T12:00:00", 2, gapPolicy="SHIFT_FORWARD"), qtmodeltester)
    shifted = next(r for r in range(model.rowCount()) if _text(model, r, Column.STATUS) == "↷ shifted")
    assert _text(model, shifted, Column.LOCAL) == "Sun 2027-03-14 03:00 EDT"
    assert _text(model, shifted, Column.UTC) == "2027-03-14 07:00Z"
    colour = model.data(model.index(shifted, model.column_of(Column.STATUS)), Qt.ItemDataRole.ForegroundRole)
    assert colour.color() == QColor(ORANGE)


def test_fold_both_second_reading_has_its_own_look(qtmodeltester) -> None:
    # Berlin 2026-10-25: 02:15 happens twice (CEST then CET); hourly-fallback runs both.
    model = _model(_preview("hourly-fallback", "2026-10-25T00:00:00", 3), qtmodeltester)
    statuses = [_text(model, r, Column.STATUS) for r in range(model.rowCount()) if not model.is_separator(r)]
    assert statuses == ["✓ scheduled", "② second reading", "✓ scheduled"]
    assert model.separator_rows() == [1]
    assert "fall back 1 h" in str(_text(model, 1, Column.NOMINAL))
    assert _text(model, 0, Column.LOCAL) == "Sun 2026-10-25 02:15 CEST"
    assert _text(model, 2, Column.LOCAL) == "Sun 2026-10-25 02:15 CET"
    colour = model.data(model.index(2, model.column_of(Column.STATUS)), Qt.ItemDataRole.ForegroundRole)
    assert colour.color() == QColor(BLUE)


def test_skipped_rows_are_grey_in_every_column(qtmodeltester) -> None:
    model = _model(_preview("daily-ops-summary", "2027-03-13T12:00:00", 2), qtmodeltester)
    skipped = next(r for r in range(model.rowCount()) if _text(model, r, Column.STATUS) == "⊘ skipped: gap")
    for column in (Column.NOMINAL, Column.STATUS, Column.WHY):
        brush = _text(model, skipped, column, Qt.ItemDataRole.ForegroundRole)
        assert brush.color() == QColor(GREY)
    assert _text(model, skipped, Column.SLOT_ID) == "—"


def test_second_zone_column(qtmodeltester) -> None:
    model = _model(_preview("daily-ops-summary", "2027-03-12T12:00:00", 4), qtmodeltester)
    assert model.column_of(Column.SECOND) == -1
    model.set_second_zone("Europe/Berlin")
    qtmodeltester.check(model)
    column = model.column_of(Column.SECOND)
    assert column > 0
    assert model.headerData(column, Qt.Orientation.Horizontal) == "In Europe/Berlin"
    # 2027-03-13 07:30Z is 08:30 CET; 2027-03-15 06:30Z is 07:30 CET (Europe changes later).
    assert _text(model, 0, Column.SECOND) == "Sat 2027-03-13 08:30 CET +01:00"
    assert _text(model, 3, Column.SECOND) == "Mon 2027-03-15 07:30 CET +01:00"
    assert _text(model, 2, Column.SECOND) == "—"
    model.set_second_zone(None)
    assert model.column_of(Column.SECOND) == -1


def test_second_zone_refuses_a_bad_name() -> None:
    model = PreviewModel()
    with pytest.raises(ZoneError, match="did you mean"):
        model.set_second_zone("Europe/Berln")
    assert model.second_zone is None


def test_ids_are_elided_but_copied_whole(qtmodeltester) -> None:
    model = _model(_preview("daily-ops-summary", "2027-03-01T12:00:00", 2), qtmodeltester)
    row = model.item(0)
    assert isinstance(row, Occurrence)
    shown = _text(model, 0, Column.OCCURRENCE_ID)
    assert shown == row.occurrence_id[:12] + "…"
    assert _text(model, 0, Column.OCCURRENCE_ID, CopyRole) == row.occurrence_id
    assert _text(model, 0, Column.OCCURRENCE_ID, Qt.ItemDataRole.ToolTipRole) == row.occurrence_id
    assert _text(model, 0, Column.SLOT_ID, CopyRole) == row.logical_slot_id
    accessible = _text(model, 0, Column.STATUS, Qt.ItemDataRole.AccessibleTextRole)
    assert accessible == "Status: ✓ scheduled"


def test_times_use_a_fixed_width_font(qtmodeltester) -> None:
    model = _model(_preview("daily-ops-summary", "2027-03-01T12:00:00", 1), qtmodeltester)
    font = _text(model, 0, Column.UTC, Qt.ItemDataRole.FontRole)
    assert font is not None and font.fixedPitch()
    assert _text(model, 0, Column.WHY, Qt.ItemDataRole.FontRole) is None


def test_empty_and_cleared(qtmodeltester) -> None:
    model = _model(None, qtmodeltester)
    assert model.rowCount() == 0
    model.set_preview(_preview("daily-ops-summary", "2027-03-01T12:00:00", 3))
    assert model.rowCount() == 3
    model.set_preview(None)
    assert model.rowCount() == 0


MERGE_CASES = [
    # (id, demo, start, count, where the separators fall)
    ("new_york_spring", "daily-ops-summary", "2027-03-12T12:00:00", 4, [1]),
    ("new_york_fall", "daily-ops-summary", "2026-10-30T00:00:00", 5, [2]),
    ("melbourne_april_fold", "mel-sync", "2026-03-30T00:00:00", 2, [1]),
    ("london_no_change", "invoice-month-end", "2026-05-01T00:00:00", 2, []),
]


@pytest.mark.parametrize(
    ("name", "start", "count", "separators"), [c[1:] for c in MERGE_CASES], ids=[c[0] for c in MERGE_CASES]
)
def test_separator_positions(name: str, start: str, count: int, separators: list[int]) -> None:
    merged = merge_rows(_preview(name, start, count))
    assert [i for i, item in enumerate(merged) if isinstance(item, Transition)] == separators
    times = [item.utc if isinstance(item, Transition) else item.position for item in merged]
    assert times == sorted(times)


def test_transition_words() -> None:
    preview = _preview("daily-ops-summary", "2026-10-30T00:00:00", 5)
    assert [transition_words(t) for t in preview.transitions] == ["−1 h"]
    spring = _preview("daily-ops-summary", "2027-03-12T12:00:00", 4)
    assert [transition_words(t) for t in spring.transitions] == ["+1 h"]


@pytest.mark.parametrize("count", [500, 5000])
def test_set_preview_is_quick(count: int) -> None:
    preview = _preview("hourly-fallback", "2026-01-01T00:00:00", count)
    assert sum(r.status is Status.SCHEDULED for r in preview.rows) > 0
    model = PreviewModel()
    began = time.perf_counter()
    model.set_preview(preview)
    for row in range(0, min(model.rowCount(), 60)):  # what a view shows on one screen
        for column in range(model.columnCount()):
            model.data(model.index(row, column))
    elapsed = time.perf_counter() - began
    assert model.occurrence_count() == count
    # Generous bound for a shared machine; measured figures go in the docs.
    assert elapsed < 0.25 * (count / 500)
