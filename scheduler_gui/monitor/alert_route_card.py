"""Needs attention for an alert route that keeps failing: one card per route, however many
alerts wait for it, with the last error. The decision is fixing the route (the spec's
``alerts``, or the ledger's default routes and SMTP settings in Engine ▸ Engine Settings…);
the engines keep trying meanwhile (:func:`core.ledger.alert_queries.failing_routes`)."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from core.desktop.notify.needs import alerts_key
from core.ledger.alert_queries import FailingRoute
from scheduler_gui.monitor.held_card import NoticeCard


class AlertRouteCard(NoticeCard):
    """One route whose alerts are not getting through, and why."""

    def __init__(self, failing: FailingRoute, parent: QWidget | None = None) -> None:
        many = "1 alert waits" if failing.undelivered == 1 else f"{failing.undelivered:,} alerts wait"
        super().__init__(
            "alertRouteCard",
            f"alerts not delivered: {failing.route}",
            ("<b style='color:{colour}'>✉ Alerts not delivered</b>", "Alerts not delivered"),
            (
                f"{failing.route}: {many}; the last try said: {failing.last_error or 'nothing'}. The engines keep "
                "trying. Fix the route (the schedule's alerts, or Engine ▸ Engine Settings… for the ledger's), "
                f"or try it with: schedctl alerts test {failing.route}",
                "Why the alerts are not delivered",
            ),
            parent,
        )
        self.failing = failing
        self.key = alerts_key(failing.route)
