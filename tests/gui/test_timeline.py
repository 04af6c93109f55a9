"""The timeline: it paints every demo, zooms and pans, explains what is under the pointer,
and its geometry (time ↔ pixels, ticks, bands, folds) is right."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gui_support import DEMO
from PySide6.QtCore import QEvent, QLocale, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QHelpEvent, QImage, QPalette
from PySide6.QtWidgets import QApplication, QToolTip

from core.clock import FixedClock
from core.recurrence.occurrence import Occurrence
from core.time.zones import get_zone, transitions
from scheduler_gui.context import AppContext
from scheduler_gui.preview import geometry
from scheduler_gui.preview.geometry import Viewport
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.preview.timeline import TimelineView
from scheduler_gui.workspace.document import SpecDocument


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture(autouse=True)
def english() -> None:
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    yield
    QLocale.setDefault(before)


_STARTED: list[PreviewService] = []


@pytest.fixture(autouse=True)
def _wait_for_services() -> None:
    """Every build a test starts ends within the test: a service must not be freed mid-build."""
    yield
    while _STARTED:
        _STARTED.pop().wait()


def _view(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot, count: int = 40) -> TimelineView:
    service = PreviewService(document, clock)
    _STARTED.append(service)
    service.set_count(count)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        view = TimelineView(service, ctx)
        qtbot.addWidget(view)
    view.resize(900, 320)
    view.fit()
    return view


def _painted(view: TimelineView) -> QImage:
    image = view.grab().toImage()
    assert not image.isNull()
    return image


def _non_background(image: QImage, background: QColor) -> int:
    count = 0
    for y in range(0, image.height(), 3):
        for x in range(0, image.width(), 3):
            if image.pixelColor(x, y) != background:
                count += 1
    return count


@pytest.mark.parametrize("name", sorted(p.stem for p in DEMO.glob("*.yaml")))
def test_paints_every_demo(name: str, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    document = SpecDocument()
    document.load(DEMO / f"{name}.yaml")
    clock.set(utc("2026-10-20T00:00:00"))
    view = _view(document, clock, ctx, qtbot, count=60)
    image = _painted(view)
    background = view.palette().color(QPalette.ColorRole.Base)
    assert _non_background(image, background) > 500
    assert view.viewport is not None


def test_readable_in_a_dark_palette(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    view = _view(document, clock, ctx, qtbot)
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#f0f0f0"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#f0f0f0"))
    view.setPalette(dark)
    image = _painted(view)
    # Marks of scheduled rows are drawn in the palette's text colour: light on dark.
    marks_y = int(view._layout()[1])
    row = next(r for r in view._rows if r.runnable)
    x = round(view._x(row.position))
    assert image.pixelColor(x, marks_y).lightness() > 200


def test_zoom_and_pan_change_the_visible_range(
    document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot
) -> None:
    view = _view(document, clock, ctx, qtbot)
    fitted = view.viewport
    assert fitted is not None
    view.zoom(2.0)
    zoomed = view.viewport
    assert zoomed is not None and zoomed.span == pytest.approx(fitted.span / 2, abs=timedelta(seconds=1))
    view.pan(100)
    assert view.viewport is not None and view.viewport.start < zoomed.start
    view.fit()
    assert view.viewport == fitted


def test_wheel_and_drag(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    view = _view(document, clock, ctx, qtbot)
    view.show()
    qtbot.waitExposed(view)
    before = view.viewport
    assert before is not None
    # Dragging right by 200 px brings earlier times into view.
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=QPoint(400, 150))
    qtbot.mouseMove(view, QPoint(600, 150))
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=QPoint(600, 150))
    after = view.viewport
    assert after is not None
    assert after.start == pytest.approx(
        before.start - timedelta(seconds=200 * before.seconds_per_px), abs=timedelta(seconds=1)
    )
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.viewport is not None and view.viewport.span < after.span
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.viewport == before


def test_refresh_keeps_a_zoomed_view(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    view = _view(document, clock, ctx, qtbot)
    view.zoom(3.0)
    kept = view.viewport
    with qtbot.waitSignal(view._service.ready, timeout=10_000):
        document.set_value("gapPolicy", "SHIFT_FORWARD")
    assert view.viewport == kept


def test_tooltip_over_a_mark(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    view = _view(document, clock, ctx, qtbot)
    skipped = next(r for r in view._rows if not r.runnable)
    assert isinstance(skipped, Occurrence)
    y = view._layout()[1]
    point = QPointF(view._x(skipped.position) + 2, y + 1)
    assert view.row_at(point) is skipped
    tip = view.tooltip_at(point)
    assert tip is not None
    assert tip.startswith("⊘ skipped: gap · nominal Sun 2027-03-14 02:30")
    assert "02:30 does not exist" in tip
    far = next(r for r in view._rows if abs(r.position - view._changes[0].utc) > timedelta(days=5))
    assert view.tooltip_at(QPointF(view._x(far.position), y + 60)) is None
    change = view._changes[0]
    tip = view.tooltip_at(QPointF(view._x(change.utc), 60))
    assert tip == "Clocks jump forward 1 h at 2027-03-14 07:00Z: EST → EDT"
    # The same text through Qt's own tooltip event.
    view.show()
    qtbot.waitExposed(view)
    local = point.toPoint()
    QApplication.sendEvent(view, QHelpEvent(QEvent.Type.ToolTip, local, view.mapToGlobal(local)))
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text().startswith("⊘ skipped: gap")
    QToolTip.hideText()


def test_failure_is_drawn_as_a_message(document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot) -> None:
    view = _view(document, clock, ctx, qtbot)
    with qtbot.waitSignal(view._service.failed, timeout=10_000):
        document.set_value("rule", "FREQ=SECONDLY")
    assert view._message.startswith("⚠ The timeline cannot be drawn")
    assert view.row_at(QPointF(100, 100)) is None
    _painted(view)


# --- geometry -----------------------------------------------------------------------------------

VP = Viewport(utc("2027-03-14T00:00:00"), utc("2027-03-15T00:00:00"), 960.0)  # 90 s per pixel


@pytest.mark.parametrize(
    ("instant", "x"),
    [
        pytest.param("2027-03-14T00:00:00", 0.0, id="left_edge"),
        pytest.param("2027-03-14T12:00:00", 480.0, id="middle"),
        pytest.param("2027-03-15T00:00:00", 960.0, id="right_edge"),
        pytest.param("2027-03-13T23:00:00", -40.0, id="before_the_left_edge"),
    ],
)
def test_time_to_x_and_back(instant: str, x: float) -> None:
    assert VP.x_of(utc(instant)) == pytest.approx(x)
    assert VP.t_of(x) == utc(instant)


@pytest.mark.parametrize(
    ("factor", "about_x", "start", "end"),
    [
        pytest.param(2.0, 480.0, "2027-03-14T06:00:00", "2027-03-14T18:00:00", id="in_about_middle"),
        pytest.param(2.0, 0.0, "2027-03-14T00:00:00", "2027-03-14T12:00:00", id="in_about_left_edge"),
        pytest.param(0.5, 960.0, "2027-03-13T00:00:00", "2027-03-15T00:00:00", id="out_about_right_edge"),
        pytest.param(1e9, 480.0, "2027-03-14T11:55:00", "2027-03-14T12:05:00", id="clamped_to_ten_minutes"),
    ],
)
def test_zoom_keeps_the_point_under_the_pointer(factor: float, about_x: float, start: str, end: str) -> None:
    zoomed = VP.zoomed(factor, about_x)
    assert (zoomed.start, zoomed.end) == (utc(start), utc(end))
    assert zoomed.t_of(about_x) == VP.t_of(about_x)


def test_pan() -> None:
    assert VP.panned(40).start == utc("2027-03-13T23:00:00")
    assert VP.panned(-40).end == utc("2027-03-15T01:00:00")


@pytest.mark.parametrize(
    ("hours", "width", "step"),
    [
        pytest.param(1, 960, timedelta(minutes=5), id="an_hour"),
        pytest.param(24, 960, timedelta(hours=3), id="a_day"),
        pytest.param(24 * 7, 960, timedelta(days=1), id="a_week"),
        pytest.param(24 * 14, 960, timedelta(days=2), id="two_weeks"),
        pytest.param(24 * 365, 960, timedelta(days=28), id="a_year_by_months"),
        pytest.param(24 * 365 * 2, 960, timedelta(days=91), id="two_years_by_quarters"),
        pytest.param(24 * 365 * 8, 960, timedelta(days=364), id="eight_years_by_years"),
    ],
)
def test_tick_step(hours: int, width: float, step: timedelta) -> None:
    vp = Viewport(VP.start, VP.start + timedelta(hours=hours), width)
    assert geometry.tick_step(vp, min_px=70) == step


def test_fit() -> None:
    assert geometry.fit([], 500) is None
    vp = geometry.fit([utc("2027-03-14T00:00:00"), utc("2027-03-16T00:00:00")], 500, margin=0.25)
    assert vp == Viewport(utc("2027-03-13T12:00:00"), utc("2027-03-16T12:00:00"), 500)
    single = geometry.fit([utc("2027-03-14T00:00:00")], 500, margin=0)
    assert single is not None and single.span == timedelta(hours=2)


TICK_CASES = [
    # (id, zone, from UTC, to UTC, step, the wall times ticked)
    (
        "new_york_spring_hourly_skips_2am",
        "America/New_York",
        "2027-03-14T05:30:00",
        "2027-03-14T09:00:00",
        timedelta(hours=1),
        ["01:00", "03:00", "04:00", "05:00"],
    ),
    (
        "new_york_fall_hourly_1am_once",
        "America/New_York",
        "2026-11-01T04:00:00",
        "2026-11-01T08:30:00",
        timedelta(hours=1),
        ["00:00", "01:00", "02:00", "03:00"],
    ),
    (
        "lord_howe_half_hour_gap",
        "Australia/Lord_Howe",
        "2026-10-03T14:30:00",
        "2026-10-03T16:00:00",
        timedelta(minutes=30),
        ["01:00", "01:30", "02:30", "03:00"],
    ),
    (
        "weekly_on_mondays",
        "Europe/Paris",
        "2027-03-01T00:00:00",
        "2027-03-20T00:00:00",
        timedelta(days=7),
        ["03-08", "03-15"],  # Monday 03-01 00:00 Paris is 02-28 23:00Z, before the range
    ),
]


@pytest.mark.parametrize(
    ("zone", "lo", "hi", "step", "wall"), [c[1:] for c in TICK_CASES], ids=[c[0] for c in TICK_CASES]
)
def test_local_ticks(zone: str, lo: str, hi: str, step: timedelta, wall: list[str]) -> None:
    vp = Viewport(utc(lo), utc(hi), 800)
    ticks = geometry.local_ticks(vp, get_zone(zone), step)
    fmt = "%m-%d" if step >= timedelta(days=1) else "%H:%M"
    assert [local.strftime(fmt) for _, local in ticks] == wall
    assert all(vp.start <= instant <= vp.end for instant, _ in ticks)


def test_offset_bands_and_fold_spans() -> None:
    zone = get_zone("America/New_York")
    lo, hi = utc("2026-10-01T00:00:00"), utc("2027-04-01T00:00:00")
    changes = transitions(zone, lo, hi)
    bands = geometry.offset_bands(lo, hi, zone, changes)
    assert [(b.abbreviation, b.start, b.end) for b in bands] == [
        ("EDT", lo, utc("2026-11-01T06:00:00")),
        ("EST", utc("2026-11-01T06:00:00"), utc("2027-03-14T07:00:00")),
        ("EDT", utc("2027-03-14T07:00:00"), hi),
    ]
    # 01:00–02:00 happens twice: 05:00–06:00Z (EDT) and 06:00–07:00Z (EST).
    assert geometry.fold_spans(changes) == [(utc("2026-11-01T05:00:00"), utc("2026-11-01T07:00:00"))]


@pytest.mark.parametrize(
    ("x", "found"),
    [
        pytest.param(10.0, 0, id="exact"),
        pytest.param(24.0, 1, id="nearer_the_second"),
        pytest.param(50.0, None, id="too_far"),
        pytest.param(-5.0, None, id="before_all"),
    ],
)
def test_nearest(x: float, found: int | None) -> None:
    assert geometry.nearest([10.0, 26.0, 70.0], x, radius=8.0) == found


def test_screenshot_for_review(
    document: SpecDocument, clock: FixedClock, ctx: AppContext, qtbot, tmp_path: Path
) -> None:
    view = _view(document, clock, ctx, qtbot)
    target = tmp_path / "timeline.png"
    assert view.grab().save(str(target))
    assert target.stat().st_size > 2000
    assert QApplication.instance() is not None
