"""The top of the designer: the schedule's title, what the person types
("Morning summary"), and beneath it the id (``scheduleId``) the ledger knows it by.

The id follows the title (its slug, made unique) until the person edits the id
by hand. It is checked as it is typed: the contract's form, no other file of
the workspace with the same id, and no schedule in the ledger published from
another file (:mod:`scheduler_gui.workspace.schedule_names`). A problem sits under the
field and Save and Publish wait (``SpecDocument.set_field_problem``); the
mapping keeps its last good id. Once the schedule is published from this file
the id is fixed: the field is read-only, says why, and offers "Make a new
schedule from this…" (a copy under a fresh id, revision 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from scheduler_gui.a11y import accessible, buddy, explain
from scheduler_gui.context import AppContext
from scheduler_gui.designer.notes import meaning_label, problem_label
from scheduler_gui.designer.zone_picker import fixed_font
from scheduler_gui.monitor.states import HubState
from scheduler_gui.rights_gate import refusal
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.folder import read_entry
from scheduler_gui.workspace.schedule_names import IdCheck, NamesInUse, check_id, follows_title

if TYPE_CHECKING:
    from scheduler_gui.monitor.hub import MonitorHub

#: The field name under which the id's problem is recorded in the document.
FIELD = "scheduleId"


class IdentityFields(QWidget):
    """Title and id of one document; :meth:`watch` a :class:`MonitorHub` to check ids against the ledger."""

    newScheduleRequested = Signal()
    """The person asked for a new schedule made from this published one ("Make a new schedule from this…")."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("identityFields")
        self._doc = document
        self._ctx = ctx
        self._hub: MonitorHub | None = None
        self._writing = False
        self._shown: tuple[Any, Any] = (None, None)  # (title, id) last taken from the document
        self.check = IdCheck()

        self.title_edit = QLineEdit(self)
        self.title_edit.setPlaceholderText("Name this schedule, e.g. Morning summary")
        accessible(
            self.title_edit,
            "Title",
            "What this schedule is called (title): shown in the sidebar and the monitor.\n"
            "The id below follows it until you edit the id yourself.",
        )
        font = self.title_edit.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title_edit.setFont(font)

        self.id_edit = QLineEdit(self)
        self.id_edit.setAccessibleName("Id")
        self.id_edit.setFont(fixed_font())
        self.id_edit.setMaxLength(80)  # longer than 64, so that "too long" is said rather than swallowed
        self.id_edit.setMinimumWidth(260)
        self.id_edit.setMaximumWidth(480)
        # Read-only (published) looks it: no field to type in, just the id.
        self.id_edit.setStyleSheet('QLineEdit[readOnly="true"] { background: palette(window); }')
        self.lock = QLabel(self)
        self.lock.setAccessibleName("Id: published")
        self.new_button = QPushButton("Make a new schedule from this…", self)
        accessible(
            self.new_button,
            "Make a new schedule from this",
            "Copy this schedule under a new id, as revision 1, and choose where to save it.\n"
            "The published schedule keeps running under its id.",
        )
        self.new_button.clicked.connect(self.newScheduleRequested)
        self.problem = problem_label(self, "Id: problem")
        self.note = meaning_label(self, "Id: note")

        id_row = QHBoxLayout()
        id_row.setContentsMargins(0, 0, 0, 0)
        id_row.setSpacing(8)
        id_row.addWidget(self.id_edit)
        id_row.addWidget(self.lock)
        id_row.addWidget(self.new_button)
        id_row.addStretch(1)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        title_label = buddy(QLabel("Title", self), self.title_edit)
        id_label = buddy(QLabel("Id", self), self.id_edit)
        grid.addWidget(title_label, 0, 0)
        grid.addWidget(self.title_edit, 0, 1)
        grid.addWidget(id_label, 1, 0)
        grid.addLayout(id_row, 1, 1)
        grid.addWidget(self.problem, 2, 1)
        grid.addWidget(self.note, 3, 1)
        grid.setColumnStretch(1, 1)

        # Another file appearing in the workspace (or leaving it) can take or free an id.
        self._folder_watch = QFileSystemWatcher(self)
        if ctx.workspace.is_dir():
            self._folder_watch.addPath(str(ctx.workspace))
        self._folder_watch.directoryChanged.connect(self._recheck_after)

        self.title_edit.textEdited.connect(self._title_edited)
        self.id_edit.textEdited.connect(self._id_edited)
        document.changed.connect(self.sync)
        document.pathChanged.connect(self._recheck_after)
        self.sync()
        # A new document's id follows its title; an opened file's only while it still is the title's.
        self.following = not self.check.locked and (
            document.path is None or follows_title(self.id_text, document.value("title"))
        )

    # --- what is known -----------------------------------------------------------
    def watch(self, hub: MonitorHub) -> None:
        """Check ids against the ledger ``hub`` has open, again whenever its schedules change."""
        self._hub = hub
        # Bound methods, not lambdas: Qt drops these connections when this page is deleted (the hub stays).
        hub.summariesChanged.connect(self._recheck_after)
        hub.ledgerReady.connect(self.recheck)
        hub.ledgerFailed.connect(self._recheck_after)
        hub.rightsChanged.connect(self._recheck_after)
        self.recheck()

    def _recheck_after(self, _what: object = None) -> None:
        self.recheck()

    def names(self) -> NamesInUse:
        """The ids in use now: the workspace's, and the ledger's when it is open."""
        hub = self._hub
        summaries = hub.summaries if hub is not None and hub.state is HubState.OPEN else None
        return NamesInUse.read(self._ctx.workspace, summaries)

    @property
    def id_text(self) -> str:
        return self.id_edit.text()

    def _on_disk(self) -> str | None:
        path = self._doc.path
        return read_entry(path).schedule_id if path is not None and path.is_file() else None

    def check_now(self, text: str | None = None, *, own: Path | None = None) -> IdCheck:
        """The check of ``text`` (default: the field's) for the file ``own`` (default: the document's)."""
        own = own if own is not None else self._doc.path
        return check_id(
            self.id_text if text is None else text,
            own=own,
            on_disk=self._on_disk(),
            names=self.names(),
            unpublishable=refusal(self._ctx.rights, "publish"),
        )

    # --- the document ------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's title and id, unless the change came from typing here."""
        if self._writing:
            return
        title, sid = self._doc.value("title"), self._doc.value("scheduleId")
        if (title, sid) == self._shown:
            return
        if title != self._shown[0]:
            self.title_edit.setText("" if title is None else str(title))
        if sid != self._shown[1]:
            # Undo, redo or a reload set the id: whatever was typed here is gone with it.
            self.id_edit.setText("" if sid is None else str(sid))
            self._doc.set_field_problem(FIELD, None)
        self._shown = (title, sid)
        self.recheck()

    def _write(self, changes: dict[str, Any], label: str, merge_key: str) -> None:
        self._writing = True
        try:
            self._doc.set_values(changes, label=label, merge_key=merge_key)
        finally:
            self._writing = False
        self._shown = (self._doc.value("title"), self._doc.value("scheduleId"))

    def _title_edited(self, text: str) -> None:
        title = text.strip() or None
        changes: dict[str, Any] = {"title": title}
        if self.following and title is not None and not self.check.locked:
            new_id = self.names().fresh_id(title, own=self._doc.path)
            self.id_edit.setText(new_id)
            changes[FIELD] = new_id
        self._write(changes, "Edit title", "title")
        self.recheck()

    def _id_edited(self, text: str) -> None:
        # Typed by hand: it follows the title again only when it is the title's id once more.
        self.following = follows_title(text, self._doc.value("title"))
        self.recheck()

    def recheck(self) -> None:
        """Check the id in the field again; a good id reaches the document, a bad one stays a field problem."""
        check = self.check_now()
        self.check = check
        if check.problem is not None:
            typed = self.id_text != self._doc.value(FIELD)
            self._doc.set_field_problem(FIELD, check.problem, key=FIELD, unfinished=typed)
        else:
            self._doc.set_field_problem(FIELD, None)
            if self.id_text != self._doc.value(FIELD):
                self._write({FIELD: self.id_text}, "Edit schedule id", FIELD)
        self._show(check)

    def _show(self, check: IdCheck) -> None:
        locked = check.locked
        if self.id_edit.isReadOnly() != locked:
            self.id_edit.setReadOnly(locked)
            self.id_edit.style().unpolish(self.id_edit)  # the style sheet reads readOnly when polished
            self.id_edit.style().polish(self.id_edit)
        published = check.published
        if locked and published is not None:
            self.following = False
            self.lock.setText(f"published · revision {published.revision} · fixed")
            why = (
                f"Published as revision {published.revision}: the id names this schedule in the ledger and "
                "no longer changes. Another id is another schedule: make a new schedule from this one."
            )
            explain(self.id_edit, why)
            self.lock.setToolTip(why)
        else:
            explain(
                self.id_edit,
                "The schedule's id in the ledger (scheduleId): lower-case letters, digits, '.', '_' or '-', "
                "at most 64.\nIt follows the title until you edit it, and is fixed once the schedule is published.",
            )
        self.lock.setVisible(locked)
        self.new_button.setVisible(locked)
        self.problem.setText(f"⚠ {check.problem}" if check.problem else "")
        self.problem.setAccessibleDescription(check.problem or "")  # its name is "Id: problem"
        self.problem.setVisible(check.problem is not None)
        self.note.setText(check.note or "")
        self.note.setVisible(bool(check.note) and check.problem is None)
