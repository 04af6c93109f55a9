"""Needs attention for an alert route that keeps failing: one card per route, however many
alerts wait for it, with the last error. The decision is fixing the route (the spec's
``alerts``, or the ledger's default routes and SMTP settings in Engine ▸ Engine Settings…);
the engines keep trying meanwhile (:func:`core.ledger.alert_queries.failing_routes`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from core.ledger.alert_queries import FailingRoute
from core.notify.needs import alerts_key
from scheduler_gui.status_style import look


class AlertRouteCard(QFrame):
    """One route whose alerts are not getting through, and why."""

    def __init__(self, failing: FailingRoute, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.failing = failing
        self.key = alerts_key(failing.route)
        colour = look("FAILED").colour
        self.setObjectName("alertRouteCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#alertRouteCard {{ border: 1px solid {colour}; border-radius: 6px; }}")
        self.setAccessibleName(f"alerts not delivered: {failing.route}")
        layout = QVBoxLayout(self)
        self.title = QLabel(f"<b style='color:{colour}'>✉ Alerts not delivered</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setAccessibleName("Alerts not delivered")
        layout.addWidget(self.title)
        many = "1 alert waits" if failing.undelivered == 1 else f"{failing.undelivered:,} alerts wait"
        self.what = QLabel(
            f"{failing.route}: {many}; the last try said: {failing.last_error or 'nothing'}. The engines keep "
            "trying. Fix the route (the schedule's alerts, or Engine ▸ Engine Settings… for the ledger's), "
            f"or try it with: schedctl alerts test {failing.route}"
        )
        self.what.setWordWrap(True)
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.what.setAccessibleName("Why the alerts are not delivered")
        layout.addWidget(self.what)
