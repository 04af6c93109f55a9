"""File ▸ Import…: a crontab (or timer files) as schedules, reviewed before anything is written.

The dialog shows what the core's import would bring in (``core.importing.sources.review_files``,
read off the GUI thread): each job with a checkbox, its title, zone, rule in words, next runs
(local and UTC) and the side-by-side line at its zone's next clock change; then every line that
cannot be imported, with the reason, and no checkbox. When a job's file names no zone
(no ``CRON_TZ=``), a zone field says which zone it runs in: the workspace's, until changed.

"Save to workspace" writes the chosen specs into the workspace folder as new files
(``core.importing.review.save_into``: never over a file). Nothing is published, and nothing is
trusted: the files are the window's like any file opened from disk, so each asks to be trusted
(``designer/trust.py``) before its task runs or is published.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock
from core.counts import counted
from core.errors import UserError
from core.importing.review import Review, ReviewJob, ReviewProblem, ReviewSpec, SaveError, save_into
from core.importing.sources import review_files
from core.recurrence.occurrence import Occurrence
from scheduler_gui.a11y import accessible, buddy, explain
from scheduler_gui.background import LatestOnly
from scheduler_gui.designer.zone_picker import ZonePicker
from scheduler_gui.preview.text import tabular_font, utc_text, wall_in_zone
from scheduler_gui.status_style import GREY, ORANGE, VERMILLION, look

#: The file types the file dialog offers.
IMPORT_FILTER = "Crontabs and timers (*);;Timer files (*.timer)"
#: Cards added to the list per turn of the event loop, so a long crontab never freezes the window.
CARDS_PER_TURN = 20
ZONE_FIELD = "Zone for jobs with no CRON_TZ"


def _label(text: str, parent: QWidget, *, mono: bool = False, colour: str | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if mono:
        label.setFont(tabular_font())
    if colour:
        label.setStyleSheet(f"color: {colour};")
    return label


def row_cells(row: Occurrence) -> tuple[str, str, str]:
    """``Tue 2027-03-02 02:30 EST``, ``2027-03-02 07:30Z`` and the status when it is not a plain run."""
    status = look(row.status.value)
    said = "" if row.status.value == "SCHEDULED" else f"{status.glyph} {status.label}"
    if row.resolved is None or row.resolved_local is None or row.offset is None:
        return row.nominal_local, "—", said
    return wall_in_zone(row.resolved_local, row.abbreviation, row.offset), utc_text(row.resolved), said


def rows_text(rows: Sequence[Occurrence]) -> str:
    """The rows one a line, local time, UTC and status in columns."""
    cells = [row_cells(row) for row in rows]
    width = max((len(local) for local, _, _ in cells), default=0)
    return "\n".join(f"{local:<{width}}   {utc}   {said}".rstrip() for local, utc, said in cells)


class JobCard(QFrame):
    """One job: a checkbox to choose it, and what it becomes."""

    def __init__(self, job: ReviewJob, review: Review, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        self.check = QCheckBox(job.title, self)
        self.check.setChecked(True)
        bold = self.check.font()
        bold.setBold(True)
        self.check.setFont(bold)
        accessible(self.check, f"Import {job.where}: {job.title}", f"Save this job into the workspace: {job.source}")
        layout.addWidget(self.check)
        zone = f"{job.zone} (the zone chosen above)" if job.zone_given else job.zone
        layout.addWidget(_label(f"{job.where}: {job.source}", self, mono=True, colour=GREY))
        for spec in job.specs:
            self._spec(layout, spec, zone)
        if job.change is not None:
            change = _label(f"{job.change.heading}\n{job.change.line}", self, mono=True)
            change.setStyleSheet("" if job.change.same else f"color: {ORANGE};")
            accessible(
                change,
                f"At the next clock change: {job.title}",
                f"What {review.source} did and what the schedule will do",
            )
            layout.addWidget(change)
        else:
            layout.addWidget(_label(f"{job.zone} has no clock change in the next ten years", self))
        for note in job.notes:
            layout.addWidget(_label(f"Note: {note}", self))

    def _spec(self, layout: QVBoxLayout, spec: ReviewSpec, zone: str) -> None:
        layout.addWidget(_label(f"{spec.words} in {zone} → {spec.file_name}", self))
        rows = rows_text(spec.rows) or "no run from now on"
        preview = _label(rows, self, mono=True)
        accessible(preview, f"Next runs of {spec.file_name}", "Its next runs, local time with the zone, then UTC")
        layout.addWidget(preview)


class ImportDialog(QDialog):
    """Review an import and save the chosen schedules into ``workspace``; :attr:`written` lists the files."""

    def __init__(
        self,
        paths: list[Path],
        *,
        workspace: Path,
        zone: str,
        clock: Clock,
        taken: Set[str] = frozenset(),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.paths, self.workspace, self.clock, self.taken = paths, workspace, clock, taken
        self.default_zone = zone
        self.zone = zone
        self.review: Review | None = None
        self.cards: list[JobCard] = []
        #: The jobs a person unchecked (by where they are): still unchecked when the zone is changed.
        self.unchecked: set[str] = set()
        self.written: list[Path] = []
        self._queue: list[ReviewJob] = []
        self._filling = False
        self.setWindowTitle("Import schedules")
        self.setAccessibleName("Import schedules")
        self.resize(920, 680)
        layout = QVBoxLayout(self)
        self.heading = _label(f"Reading {', '.join(p.name for p in paths)}…", self)
        accessible(self.heading, "What is imported", "The file read, and how many jobs it holds")
        layout.addWidget(self.heading)
        self.problem = _label("", self, colour=VERMILLION)
        accessible(self.problem, "Why nothing can be imported", "The file cannot be imported, and why")
        self.problem.hide()
        layout.addWidget(self.problem)
        layout.addWidget(self._zone_row())
        self._build_list(layout)
        self._build_buttons(layout)
        self._reader = LatestOnly(self)
        self._reader.done.connect(self._on_review)
        self._reader.failed.connect(self._on_failed)
        self._filler = QTimer(self)
        self._filler.setInterval(0)
        self._filler.timeout.connect(self._add_some)
        self.read()

    # --- parts ---------------------------------------------------------------
    def _zone_row(self) -> QWidget:
        self.zone_box = QWidget(self)
        row = QHBoxLayout(self.zone_box)
        row.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"{ZONE_FIELD}:", self.zone_box)
        self.zone_field = ZonePicker(
            self.clock,
            self.zone_box,
            name=ZONE_FIELD,
            description="The zone the machine's cron ran these jobs in (the crontab names none)",
        )
        buddy(label, self.zone_field.edit)
        self.zone_field.set_zone(self.zone)
        self.zone_field.zoneChosen.connect(self._zone_chosen)
        self.zone_note = _label("", self.zone_box, colour=ORANGE)
        row.addWidget(label, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.zone_field, 1)
        row.addWidget(self.zone_note, 1, Qt.AlignmentFlag.AlignTop)
        self.zone_box.hide()
        return self.zone_box

    def _build_list(self, layout: QVBoxLayout) -> None:
        self.list = QWidget()
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.addStretch(1)
        self.job_list = QScrollArea(self)
        self.job_list.setWidgetResizable(True)
        self.job_list.setWidget(self.list)
        accessible(
            self.job_list, "Jobs to import", "Each job with what it becomes; then the lines that cannot be imported"
        )
        layout.addWidget(self.job_list, 1)

    def _build_buttons(self, layout: QVBoxLayout) -> None:
        self.buttons = QDialogButtonBox(self)
        self.save_button = self.buttons.addButton("&Save to workspace", QDialogButtonBox.ButtonRole.AcceptRole)
        accessible(
            self.save_button,
            "Save to workspace",
            "Write the chosen schedules into the workspace as new files: not published, not trusted",
        )
        self.save_button.setEnabled(False)
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        accessible(cancel, "Cancel", "Close without importing anything")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.chosen_label = QLabel(self)
        self.chosen_label.setAccessibleName("Schedules chosen")
        row = QHBoxLayout()
        row.addWidget(self.chosen_label, 1)
        row.addWidget(self.buttons)
        layout.addLayout(row)

    # --- reading ---------------------------------------------------------------
    def read(self) -> None:
        """Read the files again with the zone shown (off the GUI thread)."""
        paths, zone, now, taken = list(self.paths), self.zone, self.clock.now(), frozenset(self.taken)
        self.save_button.setEnabled(False)
        self._reader.submit(lambda: review_files(paths, zone=zone, now=now, taken=taken))

    def wait(self, msecs: int = 30_000) -> bool:
        """Tests and screenshots: until the reading is done (its answer arrives through the event loop)."""
        return self._reader.wait(msecs)

    @property
    def ready(self) -> bool:
        """The newest reading is shown in full."""
        return not self._reader.busy and not self._filling

    def _zone_chosen(self, zone: str) -> None:
        self.zone = zone
        self.read()

    def _on_failed(self, message: str) -> None:
        self.review = None
        self._clear()
        self.heading.setText(f"Cannot import {', '.join(p.name for p in self.paths)}.")
        self.problem.setText(message)
        self.problem.show()
        self.zone_box.hide()
        self._update_chosen()

    def _on_review(self, review: Review) -> None:
        self.review = review
        self.problem.hide()
        self._clear()
        files = sum(len(job.specs) for job in review.jobs)
        self.heading.setText(
            f"From {', '.join(review.files)}: {counted(len(review.jobs), 'job')} "
            f"as {counted(files, 'schedule')}; {counted(len(review.problems), 'line')} not imported. "
            "Nothing is written until you save."
        )
        self.zone_box.setVisible(review.needs_zone)
        said = "the workspace's zone" if review.zone == self.default_zone else "chosen here"
        self.zone_note.setText(f"{review.zone}: {said}. The crontab has no CRON_TZ= line above these jobs.")
        self._queue = list(review.jobs)
        self._filling = True
        self._filler.start()

    def _add_some(self) -> None:
        review = self.review
        if review is None:
            self._filler.stop()
            return
        for job in self._queue[:CARDS_PER_TURN]:
            card = JobCard(job, review, self.list)
            card.check.setChecked(job.where not in self.unchecked)
            card.check.toggled.connect(lambda on, where=job.where: self._toggled(where, on))
            self.cards.append(card)
            self._insert(card)
        del self._queue[:CARDS_PER_TURN]
        if self._queue:
            return
        self._filler.stop()
        if review.problems:
            self._insert(_label("Not imported", self.list, colour=GREY))
        for problem in review.problems:
            self._insert(self._problem_label(problem))
        for note in review.notes:
            self._insert(_label(f"Note: {note}", self.list, colour=GREY))
        self._filling = False
        self._update_chosen()

    def _problem_label(self, problem: ReviewProblem) -> QLabel:
        label = _label(f"⊘ {problem.where}: {problem.source}\n    {problem.reason}", self.list, mono=True, colour=GREY)
        accessible(label, f"Not imported: {problem.where}", problem.reason)
        return label

    def _insert(self, widget: QWidget) -> None:
        self.list_layout.insertWidget(self.list_layout.count() - 1, widget)
        widget.show()  # now, not on the layout's next turn: the list is complete when it says so

    def _clear(self) -> None:
        self._filler.stop()
        self._filling = False
        self.cards = []
        while self.list_layout.count() > 1:
            item = self.list_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()  # at once: it is deleted on a later turn of the event loop
                widget.deleteLater()

    # --- choosing and saving ---------------------------------------------------
    def chosen(self) -> list[ReviewSpec]:
        """The specs of the jobs checked, in the file's order."""
        return [spec for card in self.cards if card.check.isChecked() for spec in card.job.specs]

    def _toggled(self, where: str, on: bool) -> None:
        if on:
            self.unchecked.discard(where)
        else:
            self.unchecked.add(where)
        self._update_chosen()

    def _update_chosen(self) -> None:
        count = len(self.chosen())
        self.chosen_label.setText(f"{counted(count, 'schedule')} chosen" if self.review else "")
        ok = self.review is not None and count > 0 and not self._filling
        self.save_button.setEnabled(ok)
        explain(
            self.save_button,
            "Write the chosen schedules into the workspace as new files: not published, not trusted"
            if ok
            else "Choose at least one job to import",
        )

    def accept(self) -> None:
        """Write the chosen specs into the workspace; a failure is shown here."""
        chosen = self.chosen()
        if not chosen or self._filling:
            return
        try:
            self.written = save_into(self.workspace, chosen)
        except (SaveError, UserError) as exc:
            self.problem.setText(f"{exc}. The files written before it stay in the workspace.")
            self.problem.show()
            return
        super().accept()

    def done(self, result: int) -> None:
        self._reader.cancel()
        self._filler.stop()
        super().done(result)
