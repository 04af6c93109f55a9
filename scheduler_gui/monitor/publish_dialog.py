"""Publish: the diff of the future, then the next revision.

Before anything is written the dialog shows what publishing would change from
the cutover on: the occurrences that appear, vanish and move (local time with
its zone and offset, UTC beside it), and the running or uncertain ones the
cutover leaves alone, each group with its count. The diff is worked out off
the GUI thread (``core.ledger.monitor_reads.publish_outlook``); Publish is one
call, one transaction (``core.ledger.publish.publish_to``), off the GUI
thread too, recording the file published (``source_file``). Whether the
task may be trusted is the caller's question, asked before this dialog.

The same look at the ledger reads the schedule already published under the
id. When it came from another
file, the dialog says so, and Publish first asks, with Cancel as the default,
naming both files and what would stop running.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.explain.summary import explain
from core.ledger.future_diff import DiffRow, FutureDiff, Move
from core.ledger.monitor_reads import publish_outlook
from core.ledger.queries import PublishedSchedule
from core.spec.model import ScheduleSpec
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.monitor.schedule_actions import DialogWrite, error_label, problem_text, zone_time
from scheduler_gui.preview.text import tabular_font, utc_text
from scheduler_gui.status_style import BLUISH_GREEN, GREY, ORANGE, look
from scheduler_gui.workspace.schedule_names import Published

if TYPE_CHECKING:
    from core.ledger.publish import PublishResult
    from scheduler_gui.context import AppContext

#: (key, glyph, heading, colour) of each group, in the order shown.
GROUPS = (
    ("appear", "+", "appear", BLUISH_GREEN),
    ("vanish", "−", "vanish", GREY),
    ("moves", "↷", "move", ORANGE),
    ("carried", "⇥", "keep their business period at the superseded time", BLUISH_GREEN),
    ("untouched", "▶", "running or waiting, left alone", None),
)
#: Rows listed per group at most (the count says how many there are).
MAX_ROWS = 500


def shift_text(shift: timedelta | None) -> str:
    """``+1 h``, ``−4 h 30 min``, ``+15 min``."""
    if shift is None:
        return ""
    sign = "+" if shift >= timedelta(0) else "−"
    minutes = abs(int(shift.total_seconds())) // 60
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = ([f"{days} d"] if days else []) + ([f"{hours} h"] if hours else []) + ([f"{mins} min"] if mins else [])
    return sign + " ".join(parts or ["0 min"])


def counts_text(diff: FutureDiff) -> str:
    """``+1 appear · −0 vanish · ↷9 move · ▶2 running or waiting, left alone · 5 unchanged``."""
    carried = f"⇥{len(diff.carried):,} carried · " if diff.carried else ""
    return (
        f"+{len(diff.appear):,} appear · −{len(diff.vanish):,} vanish · ↷{len(diff.moves):,} move · {carried}"
        f"▶{len(diff.untouched):,} running or waiting, left alone · {diff.unchanged:,} unchanged"
    )


def runs_on_text(diff: FutureDiff) -> str:
    """``Runs on engines with host=alpha``, or ``Runs on engines with host=alpha → any engine`` (was → will)."""
    if diff.runs_on is None:
        return ""
    before, after = diff.runs_on
    return f"Runs on {after}" if before is None else f"Runs on {before} → {after}"


def tzdb_policy_text(diff: FutureDiff) -> str:
    """``Time zone rules: pinned to tz database 2026a``, or ``... follows ... → pinned to ...`` (was → will)."""
    if diff.tzdb_policy is None:
        return ""
    before, after = diff.tzdb_policy
    return f"Time zone rules: {after}" if before is None else f"Time zone rules: {before} → {after}"


@dataclass(frozen=True)
class _Look:
    """What the worker read: the diff, and the schedule published under the id with its words."""

    diff: FutureDiff
    published: PublishedSchedule | None
    words: str


class PublishDialog(QDialog):
    """Shows the diff of the future for ``spec`` and publishes it on Publish.

    ``source_file`` is the spec file being published: the revision records it,
    and a schedule published under the same id from another file is only
    replaced after the person confirms.
    """

    def __init__(
        self,
        ctx: AppContext,
        spec: ScheduleSpec,
        parent: QWidget | None = None,
        *,
        source_file: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.spec = spec
        self.source_file = source_file
        self.diff: FutureDiff | None = None
        #: The schedule published under this id from another file (publishing replaces it), or None.
        self.replaces: PublishedSchedule | None = None
        self._replaced_words = ""
        #: What publish returned, once done.
        self.result_value: PublishResult | None = None
        self.setWindowTitle(f"Publish {spec.schedule_id}")
        self.setAccessibleName("Publish")
        self.resize(860, 560)
        layout = QVBoxLayout(self)
        self._build_summary(layout)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Local", "UTC", "What happens"])
        accessible(
            self.tree,
            "Occurrences that would change",
            "Each occurrence publishing would add, remove or move, and the running ones it leaves alone",
        )
        self.tree.setFont(tabular_font())
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        layout.addWidget(self.tree, 1)
        self.problem = error_label()
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.publish_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.publish_button.setText("&Publish")
        accessible(self.publish_button, "Publish", "Publish this revision: it governs from its cutover on")
        self.publish_button.setEnabled(False)
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        accessible(cancel, "Cancel", "Close without publishing")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._reader = LatestOnly(self, describe=problem_text)
        self._reader.done.connect(self._on_looked)
        self._reader.failed.connect(self._on_failed)
        self._write = DialogWrite(self.buttons, self._published, self._refused, self)
        self.refresh()

    def _build_summary(self, layout: QVBoxLayout) -> None:
        """The heading, the explanation, the counts and where it runs, above the tree."""
        spec = self.spec
        self.heading = QLabel(f"Publish {spec.schedule_id} revision {spec.revision}")
        font = self.heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.heading.setFont(font)
        layout.addWidget(self.heading)
        self.explain = QLabel("Working out what would change…")
        self.explain.setWordWrap(True)
        self.explain.setFont(tabular_font())
        layout.addWidget(self.explain)
        self.counts = QLabel()
        accessible(
            self.counts,
            "What would change",
            "How many occurrences appear, vanish and move, and which running ones stay",
        )
        layout.addWidget(self.counts)
        self.runs_on = QLabel()
        accessible(
            self.runs_on,
            "Where it runs",
            "Which engines run this schedule once it is published, when that is new or changes",
        )
        self.runs_on.hide()
        layout.addWidget(self.runs_on)
        self.tzdb_policy = QLabel()
        accessible(
            self.tzdb_policy,
            "Time zone rules",
            "Whether the schedule follows the installed tz database or is pinned to one, when that is new or changes",
        )
        self.tzdb_policy.hide()
        layout.addWidget(self.tzdb_policy)
        self.replacing = QLabel()
        self.replacing.setWordWrap(True)
        self.replacing.setStyleSheet(f"color: {ORANGE};")
        self.replacing.setAccessibleName("Replaces another file's schedule")
        self.replacing.hide()
        layout.addWidget(self.replacing)

    # --- the diff ---------------------------------------------------------------
    def refresh(self) -> None:
        """Work the diff out again (off the GUI thread)."""
        ctx, spec, now = self.ctx, self.spec, self.ctx.clock.now()

        def work() -> _Look:
            outlook = publish_outlook(ctx.ledger, spec, now)
            diff, published = outlook.diff, outlook.published
            words = explain(published.spec(), now).split(". ")[0].rstrip(".") + "." if published else ""
            return _Look(diff, published, words)

        self.publish_button.setEnabled(False)
        self._reader.submit(work)

    def wait(self, msecs: int = 30_000) -> bool:
        return self._reader.wait(msecs)

    def _on_looked(self, found: _Look) -> None:
        published = found.published
        elsewhere = (
            published is not None
            and self.source_file is not None
            and Published.of(published).replaced_by(self.source_file)
        )
        self.replaces = published if elsewhere else None
        self._replaced_words = found.words
        self.replacing.setVisible(elsewhere)
        if published is not None and elsewhere:
            self.replacing.setText(
                f"⚠ “{published.schedule_id}” is published from {Published.of(published).where()}, not from "
                f"{self._this_name()}: publishing replaces that schedule."
            )
        self.show_diff(found.diff)

    def _this_name(self) -> str:
        return self.source_file.name if self.source_file is not None else "this schedule"

    def show_diff(self, diff: FutureDiff) -> None:
        self.diff = diff
        latest = diff.published_revision
        if latest is not None and self.spec.revision <= latest:
            self.spec = self.spec.model_copy(update={"revision": latest + 1})
            self.heading.setText(
                f"Publish {diff.schedule_id} revision {latest + 1} "
                f"(revision {latest} is published; this one comes after it)"
            )
        zone = self.spec.time_zone
        what = "a new schedule: every occurrence appears" if diff.new_schedule else "compared with what runs now"
        self.explain.setText(
            f"Cutover  {zone_time(diff.cutover_at, zone)}\nUntil    {zone_time(diff.end, zone)}  ({what})"
        )
        self.counts.setText(counts_text(diff))
        self.runs_on.setText(runs_on_text(diff))
        self.runs_on.setVisible(diff.runs_on is not None)
        self.tzdb_policy.setText(tzdb_policy_text(diff))
        self.tzdb_policy.setVisible(diff.tzdb_policy is not None)
        self.tree.clear()
        for key, glyph, heading, colour in GROUPS:
            rows: tuple[Any, ...] = getattr(diff, key)
            if key == "carried" and not rows:
                continue  # shown only when a cutover would drop a business period
            group = QTreeWidgetItem([f"{glyph} {len(rows):,} {heading}", "", ""])
            group.setFirstColumnSpanned(True)
            bold = group.font(0)
            bold.setBold(True)
            group.setFont(0, bold)
            if colour:
                group.setForeground(0, QBrush(QColor(colour)))
            self.tree.addTopLevelItem(group)
            for row in rows[:MAX_ROWS]:
                group.addChild(self._item(key, row))
            if len(rows) > MAX_ROWS:
                group.addChild(QTreeWidgetItem([f"… and {len(rows) - MAX_ROWS:,} more", "", ""]))
            group.setExpanded(bool(rows))
        for column in range(2):
            self.tree.resizeColumnToContents(column)
        self.publish_button.setEnabled(True)
        self.publish_button.setFocus()

    def _item(self, key: str, row: DiffRow | Move) -> QTreeWidgetItem:
        if isinstance(row, Move):
            after, before = row.after, row.before
            was = _local(before)
            if was[:14] == _local(after)[:14]:  # the same local day: the time says it
                was = was[15:]
            return QTreeWidgetItem(
                [_local(after), _utc(after), f"{shift_text(row.shift)} · was {was} ({_utc(before)[11:]})"]
            )
        if key == "untouched":
            state = look(row.state.value if row.state is not None else "")
            item = QTreeWidgetItem([_local(row), _utc(row), f"{state.label} (revision {row.revision})"])
            if state.colour:
                item.setForeground(2, QBrush(QColor(state.colour)))
            return item
        if key == "carried":
            return QTreeWidgetItem(
                [_local(row), _utc(row), f"period {row.business_period} runs here, as revision {self.spec.revision}'s"]
            )
        why = "new" if key == "appear" else "cancelled (superseded)"
        return QTreeWidgetItem([_local(row), _utc(row), why])

    def _on_failed(self, message: str) -> None:
        self.explain.setText("The change cannot be worked out.")
        self.problem.setText(message)
        self.problem.show()

    # --- publishing ---------------------------------------------------------------
    @property
    def writing(self) -> bool:
        """Publishing is under way (off the GUI thread)."""
        return self._write.busy

    def accept(self) -> None:
        """Publish the revision; a refusal is shown here and nothing is written.

        Replacing a schedule published from another file is confirmed first;
        Cancel there publishes nothing and leaves this dialog open.
        """
        from core.ledger.publish import RevisionSource, publish_to

        if self.replaces is not None and not self.confirm_replace():
            return
        ledger, spec, clock = self.ctx.ledger, self.spec, self.ctx.clock
        source = RevisionSource.of_file(self.source_file) if self.source_file is not None else None

        def write() -> PublishResult:
            return publish_to(ledger, spec, clock, source=source)

        self.problem.hide()
        self._write.start(write)

    def confirmation(self) -> QMessageBox:
        """The question asked before replacing a schedule published from another file (Cancel is the default)."""
        old = self.replaces
        assert old is not None
        this, where = self._this_name(), Published.of(old).where()
        name = f"“{old.title}” ({old.schedule_id})" if old.title else f"“{old.schedule_id}”"
        box = QMessageBox(self)
        box.setObjectName("replaceConfirmation")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Replace a schedule published from another file?")
        box.setText(
            f"{this} and {where} both use the id “{old.schedule_id}”. "
            f"Publishing {this} replaces the schedule published from {where}."
        )
        if old.source_path is not None:
            origin = f"{old.source_path} on host {old.source_host}"
        else:
            origin = "a file the ledger did not record (standard input, or before the ledger recorded files)"
        nxt = (
            f", its next run {zone_time(old.next_due_at, old.spec().time_zone)} among them," if old.next_due_at else ""
        )
        diff = self.diff
        change = f" ({counts_text(diff)} compared with it)" if diff is not None else ""
        box.setInformativeText(
            f"What stops running: {name}, revision {old.active_revision}, published from {origin}. "
            f"{self._replaced_words} From the cutover on its occurrences not started yet are cancelled{nxt} "
            f"and {this} runs instead, as revision {self.spec.revision}{change}.\n\n"
            f"Cancel keeps the schedule from {where} running. To run both, give {this} an id of its own."
        )
        replace = box.addButton(f"Replace with {this}", QMessageBox.ButtonRole.AcceptRole)
        accessible(
            replace,
            f"Replace with {this}",
            f"Publish {this}: the schedule published from {where} stops running from the cutover on",
        )
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        return box

    def confirm_replace(self) -> bool:
        """Ask :meth:`confirmation`; True only when the person chose to replace."""
        box = self.confirmation()
        box.exec()
        chosen = box.clickedButton()
        box.deleteLater()
        return chosen is not None and box.buttonRole(chosen) == QMessageBox.ButtonRole.AcceptRole

    def _published(self, result: Any) -> None:
        self.result_value = result
        super().accept()

    def _refused(self, message: str) -> None:
        self.problem.setText(message)
        self.problem.show()

    def reject(self) -> None:
        if not self.writing:  # a publish under way finishes first
            super().reject()

    def done(self, result: int) -> None:
        self._reader.wait()
        self._write.wait()
        super().done(result)


def _local(row: DiffRow) -> str:
    if row.resolved_utc is None:
        return row.nominal_local.replace("T", " ")[:16]
    return zone_time(row.resolved_utc, row.time_zone).split(" · ")[0]


def _utc(row: DiffRow) -> str:
    return utc_text(row.resolved_utc) if row.resolved_utc is not None else "—"
