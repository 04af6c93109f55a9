"""The window's engine settings: the labels its engine has besides ``host`` and
``user``, and the OS users whose schedules it runs besides its own (docs/ledger.md,
"Teams: where a task runs and whom an engine trusts").

They are the window's ``schedctl engine run --label KEY=VALUE --trust USER``,
checked by the same rules (:func:`core.team.placement.parse_labels`,
:func:`core.team.placement.parse_trusts`) and kept in the app's settings
(``engine/labels``, ``engine/trusts``). :func:`app_placement` builds the engine's
:class:`~core.team.placement.Placement` from them; the engine announces and applies it
from its next start.

The dialog also holds the tray's two choices, which apply at once: whether the
tray tells what needs a person (:data:`~scheduler_gui.monitor.tray.NOTIFY_KEY`),
and whether the close button hides the window in the tray while the engine runs
(:data:`~scheduler_gui.monitor.hide_to_tray.HIDE_KEY`); and, given the ledger,
its alert settings (:class:`~scheduler_gui.monitor.alert_settings.AlertsBox`),
written to the ledger off the GUI thread when Save is pressed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock
from core.errors import UserError
from core.ledger.alert_queries import save_alert_settings
from core.ledger.db import Ledger
from core.team.actor import Actor, current_actor
from core.team.placement import BUILT_IN_LABELS, LabelError, Placement, label_text, parse_labels, parse_trusts
from scheduler_gui.a11y import accessible, buddy, plain_text
from scheduler_gui.monitor.alert_settings import AlertsBox
from scheduler_gui.monitor.hide_to_tray import HIDE_KEY, hide_on
from scheduler_gui.monitor.schedule_actions import DialogWrite, error_label
from scheduler_gui.monitor.tray import NOTIFY_KEY, notify_on

#: Settings keys: the labels as ``gpu=yes, site=lab``, the trusted users as ``bob, carol``.
LABELS_KEY = "engine/labels"
TRUSTS_KEY = "engine/trusts"
#: Where a person changes them, in the window's words.
WHERE = "Engine ▸ Engine Settings…"


@dataclass(frozen=True)
class EngineSettings:
    """The window's engine's own labels and the users it trusts besides its own."""

    labels: dict[str, str]
    trusts: tuple[str, ...]

    @property
    def labels_text(self) -> str:
        return label_text(self.labels)

    @property
    def trusts_text(self) -> str:
        return ", ".join(self.trusts)


def _split_labels(text: str) -> list[str]:
    """``gpu=yes, site=lab`` as its labels (a comma between two)."""
    return [part for part in (p.strip() for p in text.split(",")) if part]


def _split_trusts(text: str) -> list[str]:
    """``bob, carol`` or ``bob carol`` as its users."""
    return [part for part in re.split(r"[,\s]+", text) if part]


def parse_settings(labels: str, trusts: str) -> EngineSettings:
    """The two fields as typed; :class:`~core.team.placement.LabelError` naming the first thing wrong."""
    parsed = parse_labels(_split_labels(labels))
    return EngineSettings(parsed, parse_trusts(_split_trusts(trusts)))


def read_settings(settings: QSettings) -> EngineSettings:
    """What is stored; a :class:`~core.errors.UserError` when the settings file was edited into nonsense."""
    labels, trusts = str(settings.value(LABELS_KEY, "") or ""), str(settings.value(TRUSTS_KEY, "") or "")
    try:
        return parse_settings(labels, trusts)
    except LabelError as exc:
        raise UserError(f"The engine settings cannot be used: {_words(exc)}; change them in {WHERE}") from None


def save_settings(settings: QSettings, labels: str, trusts: str) -> EngineSettings:
    """Check the two fields and store them; on a :class:`~core.team.placement.LabelError` nothing is stored."""
    parsed = parse_settings(labels, trusts)
    settings.setValue(LABELS_KEY, parsed.labels_text)
    settings.setValue(TRUSTS_KEY, parsed.trusts_text)
    settings.sync()
    return parsed


def app_placement(settings: QSettings, actor: Actor | None = None) -> Placement:
    """The window's engine's labels and trusts: ``actor``'s (default: this process's) with the stored ones."""
    stored = read_settings(settings)
    return Placement.of(actor or current_actor(), stored.labels, stored.trusts)


def _words(exc: LabelError) -> str:
    """A core message in the dialog's words: ``Labels: 'gpu': write KEY=VALUE…``."""
    text = str(exc)
    for option, field in (("--label ", "Labels: "), ("--trust ", "Trusted users: ")):
        if text.startswith(option):
            return field + text.removeprefix(option).replace(option, "")  # "e.g. --label gpu=yes": "e.g. gpu=yes"
    return text


class EngineSettingsDialog(QDialog):
    """Labels and trusted users of the window's engine; Save checks them and stores them, or says what is
    wrong and changes nothing."""

    def __init__(
        self,
        settings: QSettings,
        parent: QWidget | None = None,
        *,
        actor: Actor | None = None,
        ledger: tuple[Ledger, Clock] | None = None,
    ) -> None:
        """``ledger``: the ledger and clock whose alert settings the dialog shows too (none: no Alerts box)."""
        super().__init__(parent)
        self.settings = settings
        actor = actor or current_actor()
        self.setWindowTitle("Engine Settings")
        self.setAccessibleName("Engine Settings")
        self.setMinimumWidth(520)
        built_in = label_text({BUILT_IN_LABELS[0]: actor.host, BUILT_IN_LABELS[1]: actor.user})
        intro = QLabel(
            f"This window's engine has the labels {built_in}: a schedule runs on it when its runsOn matches"
            f" its labels and its publisher is {actor.user} or a user trusted below (on a PostgreSQL ledger,"
            " the database role that published it, by name)."
        )
        intro.setWordWrap(True)
        intro.setAccessibleName("About the engine's labels")
        try:
            stored = read_settings(settings)
        except UserError:
            stored = EngineSettings({}, ())  # the file was edited into nonsense: start again from nothing
        self.labels = QLineEdit(stored.labels_text)
        self.labels.setPlaceholderText("gpu=yes, site=lab")
        accessible(
            self.labels,
            "Labels",
            "More labels of this engine, KEY=VALUE, separated by commas (host and user are built in)",
        )
        self.trusts = QLineEdit(stored.trusts_text)
        self.trusts.setPlaceholderText("bob, carol — or * for anyone")
        accessible(
            self.trusts,
            "Trusted users",
            f"Publishers whose schedules this engine runs besides {actor.user}: OS users on a SQLite ledger,"
            " database roles on PostgreSQL; separated by commas; * for anyone",
        )
        form = QFormLayout()
        form.addRow(buddy(QLabel("&Labels"), self.labels), self.labels)
        form.addRow(buddy(QLabel("&Trusted users"), self.trusts), self.trusts)
        self.desktop = self._desktop_box(settings)
        self.when = QLabel(
            "Labels and trusted users apply when the engine next starts: the next time Tidemark opens. "
            "The tray's choices apply at once."
        )
        self.when.setWordWrap(True)
        self.when.setAccessibleName("When changes apply")
        self.problem = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        accessible(save, "Save", "Check the labels and trusted users and keep them for the engine's next start")
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        accessible(cancel, "Cancel", "Close without changing anything")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.desktop)
        #: The ledger's alert settings, when the dialog was given the ledger.
        self.alerts: AlertsBox | None = None
        self._ledger = ledger
        if ledger is not None:
            self.alerts = AlertsBox(ledger[0], self)
            layout.addWidget(self.alerts)
        self._write = DialogWrite(self.buttons, lambda _saved: self._keep(), self._failed, self)
        layout.addWidget(self.when)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        #: What was saved (None until Save succeeds).
        self.saved: EngineSettings | None = None

    def _desktop_box(self, settings: QSettings) -> QGroupBox:
        """The tray's two choices: notifications, and hiding on close."""
        box = QGroupBox("Tray")
        self.notify_box = QCheckBox("&Notify me when a person is needed")
        accessible(
            self.notify_box,
            plain_text(self.notify_box.text()),
            "A message from the tray for each batch of runs with an unknown effect, failed runs, schedules waiting "
            "for an engine and drifted schedules (the engine service's own notifications: schedctl engine run "
            "--no-notify)",
        )
        self.notify_box.setChecked(notify_on(settings))
        self.hide_box = QCheckBox("&Hide in the tray when the window is closed while the engine runs")
        accessible(
            self.hide_box,
            plain_text(self.hide_box.text()),
            "Closing the window keeps the engine running from the tray; Quit (Ctrl+Q) stops it",
        )
        self.hide_box.setChecked(hide_on(settings))
        column = QVBoxLayout(box)
        column.addWidget(self.notify_box)
        column.addWidget(self.hide_box)
        return box

    def accept(self) -> None:
        if self._write.busy:
            return
        try:
            parse_settings(self.labels.text(), self.trusts.text())
        except LabelError as exc:
            self._failed(_words(exc))
            (self.trusts if str(exc).startswith("--trust") else self.labels).setFocus()
            return
        try:
            alerts = self.alerts.planned() if self.alerts is not None else None
        except UserError as exc:
            self._failed(str(exc))
            return
        self.problem.hide()
        if alerts is None or self._ledger is None:
            self._keep()
            return
        ledger, clock = self._ledger
        self._write.start(lambda: save_alert_settings(ledger, alerts, clock.now()))

    def _failed(self, message: str) -> None:
        self.problem.setText(message)
        self.problem.show()

    def _keep(self) -> None:
        """Store the engine's own settings (checked already) and close."""
        self.saved = save_settings(self.settings, self.labels.text(), self.trusts.text())
        self.settings.setValue(NOTIFY_KEY, self.notify_box.isChecked())
        self.settings.setValue(HIDE_KEY, self.hide_box.isChecked())
        self.settings.sync()
        super().accept()

    def reject(self) -> None:
        if not self._write.busy:  # a write under way finishes first
            super().reject()

    def done(self, result: int) -> None:
        self._write.wait()
        if self.alerts is not None:
            self.alerts.wait()
        super().done(result)
