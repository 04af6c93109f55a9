"""The workspace's default zone in the window (the file itself is :mod:`core.spec.workspace_settings`).

* :class:`WorkspaceZone`: the default zone, whether a person confirmed it, and this machine's zone
  (read through ``AppContext.machine_zone``, so tests give their own).
* :class:`ZoneBanner`: the prompt above the views until the zone is confirmed ("New schedules will
  run in Europe/Berlin (this machine's zone). Keep it?"), with the zone picker for another one. It
  never blocks the window: everything else works while it waits.
* :class:`ZoneStatus`: the status bar's button with the workspace's zone; when this machine is in
  another zone it says so (a person may be travelling: the machine's zone is never used silently).
* :class:`UntouchedZone` and :func:`keep_untouched_zone`: a new schedule whose zone came from the
  default, which nobody has changed, asks once on its first save whether it should run there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QPushButton, QToolButton, QVBoxLayout, QWidget

from core.clock import Clock
from core.spec.workspace_settings import SettingsRead, WorkspaceSettingsError, choose_zone, read_settings, zone_mismatch
from scheduler_gui.a11y import accessible, explain
from scheduler_gui.context import AppContext
from scheduler_gui.status_style import ORANGE
from scheduler_gui.workspace.document import SpecDocument

if TYPE_CHECKING:
    from scheduler_gui.designer.zone_picker import ZonePicker


class WorkspaceZone(QObject):
    """The zone new schedules start in, read from the workspace's settings; ``changed`` after each read or choice."""

    changed = Signal()

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self.machine = ""
        self.settings = SettingsRead("UTC", False, False)
        self.reload()

    def reload(self) -> None:
        """Read this machine's zone and the workspace's settings again."""
        self.machine = self._ctx.machine_zone()
        self.settings = read_settings(self._ctx.workspace, self.machine)
        self.changed.emit()

    @property
    def zone(self) -> str:
        return self.settings.zone

    @property
    def confirmed(self) -> bool:
        return self.settings.confirmed

    def choose(self, zone: str) -> str | None:
        """Record ``zone`` as the workspace's, confirmed; returns why it could not be, or None."""
        try:
            self.settings = choose_zone(self._ctx.workspace, zone, self.machine)
        except WorkspaceSettingsError as exc:
            return str(exc)
        self.changed.emit()
        return None

    def mismatch(self) -> str | None:
        """What to say when this machine is in another zone ("This machine is in …"), else None."""
        return zone_mismatch(self.machine, self.zone)


class ZoneBanner(QFrame):
    """The workspace zone's prompt: shown while the zone is unconfirmed, or when asked to change it."""

    def __init__(self, zones: WorkspaceZone, clock: Clock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceZoneBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)  # set apart from the views, in light and dark
        self.setAutoFillBackground(True)
        self.setAccessibleName("Workspace zone")
        self._zones = zones
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setObjectName("workspaceZoneText")
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {ORANGE};")
        accessible(self.problem, "Workspace settings problem", "Why the workspace's settings could not be used")
        self.keep = accessible(
            QPushButton("Keep", self), "Keep the zone", "New schedules start in this zone; you will not be asked again"
        )
        self.another = accessible(
            QPushButton("Choose another…", self), "Choose another zone", "Pick the zone new schedules start in"
        )
        self._clock = clock
        #: The zone picker, made when the person first chooses another zone.
        self.picker: ZonePicker | None = None
        self.use = accessible(QPushButton("Use this zone", self), "Use this zone", "Make it the workspace's zone")
        self.cancel = accessible(QPushButton("Cancel", self), "Cancel", "Keep the workspace's zone as it is")
        self.keep.clicked.connect(lambda: self._take(self._zones.zone))
        self.another.clicked.connect(self.choose_another)
        self.use.clicked.connect(lambda: self._take(self.picker.zone() if self.picker else self._zones.zone))
        self.cancel.clicked.connect(self.refresh)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.problem)
        self._row = row = QHBoxLayout()
        row.addWidget(self.text, 1)
        for widget in (self.use, self.cancel, self.keep, self.another):
            row.addWidget(widget)
        layout.addLayout(row)
        zones.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Shown while the zone is unconfirmed, asking to keep it; hidden once it is."""
        zones = self._zones
        whose = "this machine's zone" if zones.zone == zones.machine else "the workspace's zone, not yet confirmed"
        self.text.setText(f"New schedules will run in {zones.zone} ({whose}). Keep it?")
        self.text.setAccessibleName(self.text.text())
        self.problem.setText(zones.settings.problem or "")
        self.problem.setVisible(bool(zones.settings.problem))
        self._choosing(False)
        self.setVisible(not zones.confirmed)

    def choose_another(self) -> None:
        """Show the zone picker (also from the status bar, to change a confirmed zone)."""
        self.show()
        self.text.setText("New schedules will run in:")
        self.text.setAccessibleName(self.text.text())
        picker = self._picker()
        picker.set_zone(self._zones.zone)
        self._offer(self._zones.zone)
        self._choosing(True)
        picker.setFocus()
        picker.edit.selectAll()

    def _picker(self) -> ZonePicker:
        if self.picker is None:
            from scheduler_gui.designer.zone_picker import ZonePicker

            self.picker = ZonePicker(
                self._clock,
                self,
                name="Workspace zone",
                description="The zone new schedules start in",
            )
            self.picker.setMinimumWidth(320)
            self.picker.zoneChosen.connect(self._offer)
            self._row.insertWidget(1, self.picker, 1)
        return self.picker

    def _offer(self, zone: str) -> None:
        self.use.setText(f"Use {zone}")
        self.use.setAccessibleName(self.use.text())

    def _choosing(self, on: bool) -> None:
        self._row.setStretchFactor(self.text, 0 if on else 1)
        for widget in (self.picker, self.use, self.cancel):
            if widget is not None:
                widget.setVisible(on)
        for widget in (self.keep, self.another):
            widget.setVisible(not on)

    def _take(self, zone: str) -> None:
        problem = self._zones.choose(zone)
        if problem is not None:
            self.problem.setText(problem)
            self.problem.show()


class ZoneStatus(QToolButton):
    """The status bar's "Zone Europe/Berlin"; when this machine is elsewhere, it says so. Clicking changes the zone."""

    def __init__(self, zones: WorkspaceZone, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceZone")
        self.setAutoRaise(True)
        self._zones = zones
        zones.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        zones = self._zones
        mismatch = zones.mismatch()
        self.setText(f"⚠ {mismatch}" if mismatch else f"Zone {zones.zone}")
        self.setAccessibleName(mismatch or f"Workspace zone {zones.zone}")
        explain(
            self,
            f"New schedules start in {zones.zone}, the workspace's zone"
            + (f"; this machine is in {zones.machine}" if mismatch else "")
            + ". Click to choose another.",
        )


class UntouchedZone(QObject):
    """Attached to a new document whose zone came from the workspace's default.

    The zone counts as touched once the document's zone is anything else (even if it is
    put back later), and the question is asked at most once.
    """

    def __init__(self, doc: SpecDocument, zone: str) -> None:
        super().__init__(doc)
        self.zone = zone
        self.touched = False
        self.asked = False
        self._doc = doc
        doc.changed.connect(self._on_changed)

    @classmethod
    def attach(cls, doc: SpecDocument, zone: str) -> UntouchedZone:
        return cls(doc, zone)

    @classmethod
    def of(cls, doc: SpecDocument) -> UntouchedZone | None:
        return doc.findChild(cls)

    def _on_changed(self) -> None:
        if self._doc.value("timeZone") != self.zone:
            self.touched = True

    @property
    def should_ask(self) -> bool:
        return not (self.touched or self.asked) and self._doc.value("timeZone") == self.zone


class ZoneQuestion(QMessageBox):
    """The first save's question, "Runs in Europe/Berlin (the workspace's zone). Keep it?", with Keep and Change…"""

    def __init__(self, zone: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("zoneQuestion")
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("Time zone")
        self.setText(f"Runs in {zone} (the workspace's zone). Keep it?")
        self.keep = self.addButton("Keep", QMessageBox.ButtonRole.AcceptRole)
        self.change = self.addButton("Change…", QMessageBox.ButtonRole.RejectRole)
        accessible(self.keep, "Keep", f"Save the schedule to run in {zone}")
        accessible(self.change, "Change", "Do not save yet: choose the schedule's zone first")
        self.setDefaultButton(self.keep)
        self.setEscapeButton(self.change)

    def kept(self) -> bool:
        """Ask; True when the person keeps the zone."""
        self.exec()
        return self.clickedButton() is self.keep


def keep_untouched_zone(doc: SpecDocument, parent: QWidget) -> bool | None:
    """Ask once whether a new schedule should run in the zone it got from the workspace.

    True: keep it (save); False: the person wants to change it (do not save); None: nothing to ask.
    """
    untouched = UntouchedZone.of(doc)
    if untouched is None or not untouched.should_ask:
        return None
    untouched.asked = True
    box = ZoneQuestion(untouched.zone, parent)
    try:
        return box.kept()
    finally:
        box.deleteLater()
