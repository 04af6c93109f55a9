"""The ledger's alert settings in the window (Engine ▸ Engine Settings…, "Alerts"): the
default routes of schedules whose spec has no ``alerts``, the states they hear of, and
how mail is sent. The same rules and the same ledger rows as ``schedctl alerts set``
(:func:`core.team.alert_routes.parse_routes`, :func:`core.team.alert_routes.smtp_problems`,
:func:`core.ledger.alert_queries.save_alert_settings`); read and written off the GUI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from core.enums import AlertKind
from core.errors import UserError
from core.ledger.alert_queries import AlertSettings, load_alert_settings
from core.ledger.db import Ledger
from core.team.alert_routes import SMTP_SECURITY, Smtp, parse_routes, smtp_problems
from scheduler_gui.a11y import accessible, buddy, plain_text
from scheduler_gui.background import LatestOnly
from scheduler_gui.monitor.schedule_actions import problem_text

#: Each state's box, in the window's words.
_KIND_WORDS = {
    AlertKind.FAILED: ("&Failed", "Tell the routes of runs that failed with their attempts used up"),
    AlertKind.UNKNOWN_EFFECT: ("Unknown &effect", "Tell the routes of runs whose effect nobody can vouch for"),
    AlertKind.MISFIRE_EXPIRED: ("&Missed", "Tell the routes of runs missed and expired by the misfire policy"),
}
_SMTP_FIELDS = {
    "host": "SMTP server",
    "port": "Port",
    "security": "Security",
    "user": "User",
    "password-secret": "Password secret",
    "from": "From",
}


class AlertsBox(QGroupBox):
    """The alert settings of one ledger; off until they are read. :meth:`planned` checks the fields."""

    def __init__(self, ledger: Ledger, parent: QWidget | None = None) -> None:
        super().__init__("Alerts (this ledger)", parent)
        self.setAccessibleName("Alerts")
        self.loaded: AlertSettings | None = None
        self.routes = QPlainTextEdit()
        self.routes.setPlaceholderText("mailto:ops@example.com\nhttps://hooks.example.com/tidemark\nsecret:TEAM_HOOK")
        self.routes.setTabChangesFocus(True)
        accessible(
            self.routes,
            "Alert routes",
            "Where schedules without their own alerts are told, one route a line: mailto:ADDRESS, an https:// URL "
            "(http:// only to this machine), or secret:NAME for one kept as a secret on each engine's host",
        )
        self.kinds = {kind: self._kind_box(kind) for kind in AlertKind}
        states = QGroupBox("Tell of")
        states.setAccessibleName("Tell of")
        row = QHBoxLayout(states)
        for box in self.kinds.values():
            row.addWidget(box)
        row.addStretch(1)
        # Never shorter than its boxes: a short dialog squeezes the routes' text, not the states (they were cut).
        states.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.host = self._line("SMTP server", "The mail server mailto: routes are sent through, e.g. smtp.example.com")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(587)
        accessible(self.port, "Port", "The mail server's port: 587 with STARTTLS, 465 with TLS")
        self.security = QComboBox()
        self.security.addItems(list(SMTP_SECURITY))
        accessible(self.security, "Security", "starttls (the default), tls, or none: only to a server on this machine")
        self.user = self._line("User", "The user to log in to the mail server as (empty: no login)")
        self.secret = self._line(
            "Password secret", "The name of the secret that holds the mail password on each engine's host"
        )
        self.mail_from = self._line("From", "The sender of the alert mails, e.g. tidemark@example.com")
        self.status = QLabel("Reading the alert settings…")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Alert settings status")
        form = QFormLayout(self)
        form.addRow(self.status)
        form.addRow(buddy(QLabel("&Alert routes"), self.routes), self.routes)
        form.addRow(states)
        for label, field in (
            ("SMTP &server", self.host),
            ("P&ort", self.port),
            ("Se&curity", self.security),
            ("&User", self.user),
            ("Pass&word secret", self.secret),
            ("F&rom", self.mail_from),
        ):
            form.addRow(buddy(QLabel(label), field), field)
        self._set_fields_enabled(False)
        self._reader = LatestOnly(self, describe=problem_text)
        self._reader.done.connect(self._show)
        self._reader.failed.connect(self._unreadable)
        self._reader.submit(lambda: load_alert_settings(ledger))

    def _kind_box(self, kind: AlertKind) -> QCheckBox:
        text, description = _KIND_WORDS[kind]
        box = QCheckBox(text)
        accessible(box, plain_text(text), description)
        box.setChecked(True)
        return box

    def _line(self, name: str, description: str) -> QLineEdit:
        return accessible(QLineEdit(), name, description)

    def _set_fields_enabled(self, on: bool) -> None:
        for widget in (self.routes, self.port, self.security, self.host, self.user, self.secret, self.mail_from):
            widget.setEnabled(on)
        for box in self.kinds.values():
            box.setEnabled(on)

    def _show(self, settings: object) -> None:
        assert isinstance(settings, AlertSettings)
        self.loaded = settings
        self.routes.setPlainText("\n".join(settings.routes))
        for kind, box in self.kinds.items():
            box.setChecked(kind.value in settings.kinds)
        smtp = settings.smtp
        if smtp is not None:
            self.host.setText(smtp.host)
            self.port.setValue(smtp.port)
            self.security.setCurrentText(smtp.security)
            self.user.setText(smtp.username or "")
            self.secret.setText(smtp.password_secret or "")
            self.mail_from.setText(smtp.sender)
        self.status.setText("Schedules whose spec has no alerts: are told through these routes.")
        self._set_fields_enabled(True)

    def _unreadable(self, message: str) -> None:
        self.status.setText(f"The alert settings cannot be read: {message}")

    def wait(self, msecs: int = 30_000) -> bool:
        return self._reader.wait(msecs)

    def planned(self) -> AlertSettings | None:
        """The settings the fields say, or None when there is nothing to save (not read, or unchanged);
        a :class:`UserError` naming the field when something is wrong."""
        if self.loaded is None:
            return None
        try:
            routes = parse_routes([line for line in self.routes.toPlainText().splitlines() if line.strip()])
        except ValueError as exc:
            self.routes.setFocus()
            raise UserError(f"Alert routes: {exc}") from None
        kinds = frozenset(kind.value for kind, box in self.kinds.items() if box.isChecked())
        if routes and not kinds:
            raise UserError("Tell of: tick at least one state, or remove the routes")
        settings = AlertSettings(tuple(routes), kinds or self.loaded.kinds, self._smtp())
        return None if settings == self.loaded else settings

    def _smtp(self) -> Smtp | None:
        host = self.host.text().strip()
        if not host:
            return None
        smtp = Smtp(
            host,
            self.port.value(),
            self.security.currentText(),
            self.user.text().strip() or None,
            self.secret.text().strip() or None,
            self.mail_from.text().strip() or "tidemark@localhost",
        )
        problems = smtp_problems(smtp)
        if problems:
            key, why = problems[0]
            raise UserError(f"{_SMTP_FIELDS[key]}: {why}")
        return smtp
