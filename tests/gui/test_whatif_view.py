"""The what-if view: an outage in, the engine's misfire decisions out, errors beside the fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from gui_support import demo_mapping
from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QColor

from core.clock import FixedClock
from core.engine.misfire import Action
from core.explain.whatif import what_if
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext
from scheduler_gui.preview.whatif import WhatIfModel, WhatIfView, policy_words
from scheduler_gui.status_style import GREY, ORANGE
from scheduler_gui.workspace.document import SpecDocument

OFF_FROM = datetime(2026, 6, 1, 0, 0, tzinfo=UTC)
OFF_TO = datetime(2026, 6, 4, 0, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def english() -> None:
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(before)


@pytest.fixture
def view(document: SpecDocument, ctx: AppContext, qtbot) -> WhatIfView:
    widget = WhatIfView(document, ctx)
    qtbot.addWidget(widget)
    widget.wait()
    qtbot.waitUntil(lambda: widget.stack.currentWidget() is not None)
    yield widget
    widget.wait()


def _ask(view: WhatIfView, qtbot, off_from: datetime = OFF_FROM, off_to: datetime = OFF_TO) -> None:
    with qtbot.waitSignal(view.computed, timeout=10_000):
        view.set_outage(off_from, off_to)


def _column(view: WhatIfView, column: int) -> list[str]:
    return [view.model.index(r, column).data() for r in range(view.model.rowCount())]


def test_defaults_are_the_last_three_days(view: WhatIfView, clock: FixedClock) -> None:
    assert view.outage() == (clock.now() - timedelta(days=3), clock.now())


def test_bounded_catch_up_runs_the_newest(view: WhatIfView, qtbot, qtmodeltester) -> None:
    _ask(view, qtbot)
    qtmodeltester.check(view.model)
    assert _column(view, 0) == [
        "Mon 2026-06-01 02:30 EDT",
        "Tue 2026-06-02 02:30 EDT",
        "Wed 2026-06-03 02:30 EDT",
    ]
    assert _column(view, 1) == ["2026-06-01 06:30Z", "2026-06-02 06:30Z", "2026-06-03 06:30Z"]
    assert _column(view, 2) == ["⊘ misfire expired", "⊘ misfire expired", "↻ runs late"]
    assert _column(view, 3)[0] == (
        "missed by more than latenessWindow (15 min); only the newest run is made up (misfirePolicy CATCH_UP_BOUNDED)"
    )
    assert view.summary.text().startswith("On return at 2026-06-04 00:00Z: 1 run late · 2 expire · 0 run on time.")
    assert "misfirePolicy CATCH_UP_BOUNDED (maxCatchUp 1)" in view.summary.text()
    late = view.model.index(2, 2).data(Qt.ItemDataRole.ForegroundRole)
    assert late.color() == QColor(ORANGE)
    expired = view.model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole)
    assert expired.color() == QColor(GREY)
    assert view.local_range.text() == "= Sun 2026-05-31 20:00 EDT → Wed 2026-06-03 20:00 EDT"


def test_two_made_up_says_so_in_the_plural_and_in_words(view: WhatIfView, document: SpecDocument, qtbot) -> None:
    with qtbot.waitSignal(view.computed, timeout=10_000):
        document.set_values({"maxCatchUp": 2, "latenessWindow": "PT1H30M"}, label="Two")
    _ask(view, qtbot)
    assert _column(view, 2) == ["⊘ misfire expired", "↻ runs late", "↻ runs late"]
    assert _column(view, 3)[0] == (
        "missed by more than latenessWindow (1 h 30 min); only the newest 2 are made up "
        "(misfirePolicy CATCH_UP_BOUNDED)"
    )
    assert view.summary.text().startswith("On return at 2026-06-04 00:00Z: 2 run late · 1 expire · 0 run on time.")
    assert "PT" not in view.summary.text() and "latenessWindow 1 h 30 min" in view.summary.text()


def test_matches_the_core_function(view: WhatIfView, document: SpecDocument, qtbot) -> None:
    _ask(view, qtbot)
    spec = document.spec
    assert spec is not None
    expected = what_if(spec, OFF_FROM, OFF_TO)
    assert [(r.occurrence.occurrence_id, r.action) for r in view.model.rows()] == [
        (r.occurrence.occurrence_id, r.action) for r in expected
    ]


def test_editing_the_policy_updates_the_answer(view: WhatIfView, document: SpecDocument, qtbot) -> None:
    _ask(view, qtbot)
    with qtbot.waitSignal(view.computed, timeout=10_000):
        document.set_values({"misfirePolicy": "CATCH_UP_ALL", "maxCatchUp": None}, label="Catch up all")
    assert [r.action for r in view.model.rows()] == [Action.CATCH_UP] * 3
    with qtbot.waitSignal(view.computed, timeout=10_000):
        document.set_values({"misfirePolicy": "SKIP"}, label="Skip")
    assert _column(view, 2) == ["⊘ misfire expired"] * 3
    assert "misfirePolicy SKIP runs no missed occurrence" in _column(view, 3)[0]


def test_backwards_outage_is_reported_beside_the_fields(view: WhatIfView, qtbot) -> None:
    _ask(view, qtbot)
    before = view.model.rows()
    _ask(view, qtbot, OFF_TO, OFF_FROM)
    assert not view.range_error.isHidden()
    assert "choose an end after the start" in view.range_error.text()
    assert view.model.rows() == before  # a wrong question changes nothing
    _ask(view, qtbot)
    assert view.range_error.isHidden()


def test_too_long_outage_is_capped(view: WhatIfView, document: SpecDocument, qtbot) -> None:
    # Without a business period, rows are not settled from the schedule's beginning.
    document.set_values({"rule": "FREQ=MINUTELY", "businessPeriod": None}, label="Every minute")
    _ask(view, qtbot, OFF_FROM, OFF_FROM + timedelta(days=30))
    assert "choose a shorter outage" in view.range_error.text()


def test_nothing_due(view: WhatIfView, qtbot) -> None:
    _ask(view, qtbot, datetime(2026, 6, 1, 7, tzinfo=UTC), datetime(2026, 6, 2, 6, tzinfo=UTC))
    assert view.stack.currentWidget() is view.message
    assert view.message.text() == "Nothing was due while the machine was off."


def test_invalid_spec_shows_its_message(view: WhatIfView, document: SpecDocument, qtbot) -> None:
    with qtbot.waitSignal(view.computed, timeout=10_000):
        document.set_value("timeZone", "Mars/Olympus")
    assert view.stack.currentWidget() is view.message
    assert "timeZone" in view.message.text()
    assert view.model.rowCount() == 0


def test_recent_row_runs_on_time(view: WhatIfView, qtbot) -> None:
    _ask(view, qtbot, OFF_FROM, datetime(2026, 6, 3, 6, 40, tzinfo=UTC))
    assert _column(view, 2)[-1] == "✓ runs on time"
    assert _column(view, 3)[-1] == "due less than latenessWindow before the machine came back"


def test_empty_model_passes_the_model_tester(qtmodeltester) -> None:
    model = WhatIfModel()
    qtmodeltester.check(model)
    assert model.rowCount() == 0


def test_policy_words() -> None:

    spec = parse_spec(demo_mapping("daily-ops-summary") | {"catchUpWindow": "P1D"})
    assert policy_words(spec) == (
        "misfirePolicy CATCH_UP_BOUNDED (maxCatchUp 1) · latenessWindow 15 min · catchUpWindow 1 day"
    )


def test_controls_are_named(view: WhatIfView) -> None:
    for widget in (view.from_edit, view.to_edit, view.table):
        assert widget.accessibleName() and widget.toolTip()
