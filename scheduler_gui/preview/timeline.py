"""The timeline: the preview's rows on a horizontal time axis.

Offset periods are soft bands labelled with their abbreviation, clock changes
vertical lines labelled "+1 h" / "−1 h", repeated wall times a hatched span.
Rows that run are filled marks; skipped rows are hollow marks where they would
have been. The axis reads the schedule's local time, with UTC beneath.
Wheel zooms about the pointer, dragging pans, Fit (or Home) shows every row.
"""

from __future__ import annotations

import bisect
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetrics,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPolygonF,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolButton, QToolTip, QWidget

from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview
from core.render.table import zone_label
from core.time.zones import Transition, get_zone
from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.preview import geometry, text
from scheduler_gui.preview.geometry import Viewport
from scheduler_gui.preview.model import row_look, row_tooltip, transition_words
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.status_style import BLUE, BLUISH_GREEN, GREY, ORANGE, SKY_BLUE

_BAND_COLOURS = (SKY_BLUE, ORANGE, BLUISH_GREEN, BLUE)
_MARK_RADIUS = 5.0
_HIT_RADIUS = 8.0
_ZOOM_STEP = 1.25
_MARGIN = 8.0


class TimelineView(QWidget):
    """Draws the latest preview of ``service``; the viewport survives refreshes unless it is fitted."""

    viewportChanged = Signal()

    def __init__(self, service: PreviewService, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setAccessibleName("Timeline")
        # No tooltip of its own: hovering shows the row under the pointer.
        self.setAccessibleDescription(
            "Occurrences on a time axis: wheel or +/- zooms, drag or arrow keys pan, Home fits every row"
        )
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(QSize(320, 160))
        self._service = service
        self._ctx = ctx
        self._rows: list[Occurrence] = []
        self._positions: list[datetime] = []
        self._changes: list[Transition] = []
        self._zone: ZoneInfo | None = None
        self._message = "Building the preview…"
        self._viewport: Viewport | None = None
        self._fitted = True
        self._drag_from: QPointF | None = None
        self.fit_button = QToolButton(self)
        self.fit_button.setText("Fit")
        accessible(self.fit_button, "Fit timeline", "Show every row of the preview (Home)")
        self.fit_button.clicked.connect(self.fit)
        service.ready.connect(self.set_preview)
        service.failed.connect(self.show_failure)
        if service.latest is not None:
            self.set_preview(service.latest)

    # --- content ----------------------------------------------------------------------------
    def set_preview(self, preview: Preview) -> None:
        self._rows = list(preview.rows)
        self._positions = [r.position for r in self._rows]
        self._changes = sorted(preview.transitions, key=lambda t: t.utc)
        self._zone = get_zone(preview.spec.time_zone)
        self._message = "" if self._rows else "No occurrences from this point on."
        if self._fitted or self._viewport is None:
            self.fit()
        else:
            self.update()

    def show_failure(self, message: str) -> None:
        self._rows, self._positions, self._changes = [], [], []
        self._message = f"⚠ The timeline cannot be drawn until this is fixed:\n{message}"
        self.update()

    @property
    def viewport(self) -> Viewport | None:
        return self._viewport

    def set_viewport(self, viewport: Viewport) -> None:
        self._viewport = viewport
        self._fitted = False
        self.viewportChanged.emit()
        self.update()

    def fit(self) -> None:
        """Show every row."""
        found = geometry.fit(self._positions, self._plot_width())
        self._viewport = found
        self._fitted = True
        self.viewportChanged.emit()
        self.update()

    def zoom(self, factor: float, about_x: float | None = None) -> None:
        """Zoom in (factor > 1) or out about a point of the plot (its middle by default)."""
        if self._viewport is None:
            return
        x = self._plot_width() / 2 if about_x is None else about_x - _MARGIN
        self.set_viewport(self._viewport.zoomed(factor, x))

    def pan(self, dx: float) -> None:
        """Move the picture ``dx`` pixels to the right."""
        if self._viewport is not None:
            self.set_viewport(self._viewport.panned(dx))

    # --- geometry ---------------------------------------------------------------------------
    def _plot_width(self) -> float:
        return max(float(self.width()) - 2 * _MARGIN, 1.0)

    def _x(self, instant: datetime) -> float:
        assert self._viewport is not None
        return _MARGIN + self._viewport.x_of(instant)

    def _layout(self) -> tuple[float, float, float]:
        """(top of the bands, the marks' line, the axis line)."""
        metrics = QFontMetrics(self.font())
        top = float(self.fit_button.geometry().bottom() + 4)
        axis = float(self.height()) - 2 * metrics.height() - 10
        return top, top + (axis - top) * 0.55, axis

    def row_at(self, point: QPointF) -> Occurrence | None:
        """The row whose mark is under ``point``, if any."""
        if self._viewport is None or not self._rows:
            return None
        _, marks_y, _ = self._layout()
        if abs(point.y() - marks_y) > _HIT_RADIUS * 2:
            return None
        lo = bisect.bisect_left(self._positions, self._viewport.t_of(point.x() - _MARGIN - _HIT_RADIUS))
        hi = bisect.bisect_right(self._positions, self._viewport.t_of(point.x() - _MARGIN + _HIT_RADIUS))
        xs = [self._x(p) for p in self._positions[lo:hi]]
        found = geometry.nearest(xs, point.x(), _HIT_RADIUS)
        return None if found is None else self._rows[lo + found]

    def tooltip_at(self, point: QPointF) -> str | None:
        """The tooltip for ``point``: the row under it, or the clock change under it."""
        row = self.row_at(point)
        if row is not None:
            return row_tooltip(row)
        if self._viewport is not None:
            for change in self._changes:
                if abs(self._x(change.utc) - point.x()) <= 3:
                    return (
                        f"Clocks {'jump forward' if change.kind == 'gap' else 'fall back'} "
                        f"{transition_words(change)[1:]} at {text.utc_text(change.utc)}: "
                        f"{zone_label(change.abbr_before, change.offset_before)} → "
                        f"{zone_label(change.abbr_after, change.offset_after)}"
                    )
        return None

    # --- events -----------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.tooltip_at(QPointF(event.pos()))
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        hint = self.fit_button.sizeHint()
        self.fit_button.setGeometry(self.width() - hint.width() - 4, 4, hint.width(), hint.height())
        if self._viewport is not None:
            self._viewport = self._viewport.resized(self._plot_width())
        super().resizeEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom(_ZOOM_STEP**steps, event.position().x())
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag_from = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is not None:
            dx = event.position().x() - self._drag_from.x()
            self._drag_from = event.position()
            self.pan(dx)
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._drag_from = None
        self.unsetCursor()
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(_ZOOM_STEP)
        elif key == Qt.Key.Key_Minus:
            self.zoom(1 / _ZOOM_STEP)
        elif key == Qt.Key.Key_Left:
            self.pan(self.width() / 8)
        elif key == Qt.Key.Key_Right:
            self.pan(-self.width() / 8)
        elif key in (Qt.Key.Key_Home, Qt.Key.Key_F):
            self.fit()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    # --- painting ---------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        if self._message or self._viewport is None or self._zone is None:
            painter.setPen(palette.color(QPalette.ColorRole.Text))
            painter.drawText(
                QRectF(self.rect()).adjusted(16, 16, -16, -16),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                self._message,
            )
            painter.end()
            return
        top, marks_y, axis_y = self._layout()
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(
            QRectF(_MARGIN, 4, self.fit_button.x() - 2 * _MARGIN, top - 8),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            f"{self._zone.key}: local time on the axis, UTC beneath",
        )
        self._paint_bands(painter, top, axis_y)
        self._paint_folds(painter, top, axis_y)
        self._paint_changes(painter, top, axis_y)
        self._paint_axis(painter, axis_y)
        self._paint_marks(painter, marks_y)
        painter.end()

    def _paint_bands(self, painter: QPainter, top: float, bottom: float) -> None:
        assert self._viewport is not None and self._zone is not None
        vp = self._viewport
        # Bands reach both edges of the widget, margins included.
        left_edge, right_edge = vp.t_of(-_MARGIN), vp.t_of(vp.width + _MARGIN)
        bands = geometry.offset_bands(left_edge, right_edge, self._zone, self._changes)
        offsets = sorted({b.offset for b in bands} | {t.offset_before for t in self._changes})
        text_colour = self.palette().color(QPalette.ColorRole.Text)
        for band in bands:
            colour = QColor(_BAND_COLOURS[offsets.index(band.offset) % len(_BAND_COLOURS)])
            colour.setAlpha(38)
            left, right = self._x(band.start), self._x(band.end)
            rect = QRectF(left, top, right - left, bottom - top)
            painter.fillRect(rect, colour)
            label = f"{zone_label(band.abbreviation, band.offset)} {text.offset_text(band.offset)}"
            painter.setPen(text_colour)
            visible = rect.intersected(QRectF(0, top, self.width(), bottom - top))
            painter.drawText(
                visible.adjusted(6, 4, -6, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, label
            )

    def _paint_folds(self, painter: QPainter, top: float, bottom: float) -> None:
        # Hatched in the text colour, so it reads on light and dark backgrounds alike.
        colour = QColor(self.palette().color(QPalette.ColorRole.Text))
        colour.setAlpha(90)
        for start, end in geometry.fold_spans(self._changes):
            left, right = self._x(start), self._x(end)
            painter.fillRect(QRectF(left, top, right - left, bottom - top), QBrush(colour, Qt.BrushStyle.BDiagPattern))

    def _paint_changes(self, painter: QPainter, top: float, bottom: float) -> None:
        colour = self.palette().color(QPalette.ColorRole.Text)
        metrics = QFontMetrics(self.font())
        for change in self._changes:
            x = self._x(change.utc)
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
            label = transition_words(change)
            painter.setPen(colour)
            painter.drawText(QPointF(x + 4, bottom - metrics.descent() - 4), label)

    def _paint_axis(self, painter: QPainter, axis_y: float) -> None:
        assert self._viewport is not None and self._zone is not None
        colour = self.palette().color(QPalette.ColorRole.Text)
        muted = QColor(colour)
        muted.setAlpha(150)
        metrics = QFontMetrics(text.tabular_font())
        painter.setFont(text.tabular_font())
        painter.setPen(colour)
        painter.drawLine(QPointF(0, axis_y), QPointF(self.width(), axis_y))
        step = geometry.tick_step(self._viewport, min_px=metrics.horizontalAdvance("Wed 03-14 ") + 12)
        daily = step >= timedelta(days=1)
        for instant, local in geometry.local_ticks(self._viewport, self._zone, step):
            x = self._x(instant)
            painter.setPen(colour)
            painter.drawLine(QPointF(x, axis_y), QPointF(x, axis_y + 5))
            if daily or (local.hour == 0 and local.minute == 0):
                first = f"{text.weekday(local)} {local:%m-%d}"
            else:
                first = f"{local:%H:%M}"
            second = f"{instant:%H:%M}Z" if not daily else f"{instant:%m-%d %H:%M}Z"
            if x + 3 + max(metrics.horizontalAdvance(first), metrics.horizontalAdvance(second)) > self.width():
                continue  # a label cut by the edge reads wrong; the next pan shows it whole
            painter.drawText(QPointF(x + 3, axis_y + metrics.ascent() + 4), first)
            painter.setPen(muted)
            painter.drawText(QPointF(x + 3, axis_y + metrics.height() + metrics.ascent() + 4), second)
        painter.setFont(self.font())

    def _paint_marks(self, painter: QPainter, y: float) -> None:
        """One round point per visible row, drawn in batches: a few calls however many rows."""
        assert self._viewport is not None
        vp = self._viewport
        palette = self.palette()
        text_colour = palette.color(QPalette.ColorRole.Text)
        pad = timedelta(seconds=vp.seconds_per_px * _MARK_RADIUS * 2)
        lo = bisect.bisect_left(self._positions, vp.start - pad)
        hi = bisect.bisect_right(self._positions, vp.end + pad)
        filled: dict[str, list[QPointF]] = {}
        hollow: list[QPointF] = []
        last_x = None
        for row in self._rows[lo:hi]:
            x = self._x(row.position)
            if last_x is not None and abs(x - last_x) < 0.5:
                continue  # thousands of rows on one pixel: one mark is enough
            last_x = x
            if row.runnable:
                colour = row_look(row).colour or text_colour.name()
                filled.setdefault(colour, []).append(QPointF(x, y))
            else:
                hollow.append(QPointF(x, y))
        width = 2 * _MARK_RADIUS
        for colour, points in filled.items():
            painter.setPen(QPen(QColor(colour), width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawPoints(QPolygonF(points))
        if hollow:
            # A ring: a grey disc with the background punched out of its middle.
            painter.setPen(QPen(QColor(GREY), width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawPoints(QPolygonF(hollow))
            base = palette.color(QPalette.ColorRole.Base)
            painter.setPen(QPen(base, width - 4.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawPoints(QPolygonF(hollow))
