"""Publish: the diff of the future, then the next revision.

Before anything is written the dialog shows what publishing would change from
the cutover on: the occurrences that appear, vanish and move (local time with
its zone and offset, UTC beside it), and the running or uncertain ones the
cutover leaves alone, each group with its count. The diff is worked out off
the GUI thread (``core.ledger.future_diff``); Publish writes through
``core.ledger.publish.publish`` in one ``ctx.ledger.write()``, off the GUI
thread too. Whether the
task may be trusted is the caller's question, asked before this dialog.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.ledger.future_diff import DiffRow, FutureDiff, Move, future_diff
from core.spec import ScheduleSpec
from scheduler_gui.background import LatestOnly
from scheduler_gui.monitor.schedule_actions import DialogWrite, error_label, problem_text, zone_time
from scheduler_gui.preview.text import tabular_font, utc_text
from scheduler_gui.status_style import BLUISH_GREEN, GREY, ORANGE, look

if TYPE_CHECKING:
    from core.ledger.publish import PublishResult
    from scheduler_gui.context import AppContext

#: (key, glyph, heading, colour) of each group, in the order shown.
GROUPS = (
    ("appear", "+", "appear", BLUISH_GREEN),
    ("vanish", "−", "vanish", GREY),
    ("moves", "↷", "move", ORANGE),
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
    return (
        f"+{len(diff.appear)} appear · −{len(diff.vanish)} vanish · ↷{len(diff.moves)} move · "
        f"▶{len(diff.untouched)} running or waiting, left alone · {diff.unchanged} unchanged"
    )


class PublishDialog(QDialog):
    """Shows the diff of the future for ``spec`` and publishes it on Publish."""

    def __init__(self, ctx: AppContext, spec: ScheduleSpec, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.spec = spec
        self.diff: FutureDiff | None = None
        #: What publish returned, once done.
        self.result_value: PublishResult | None = None
        self.setWindowTitle(f"Publish {spec.schedule_id}")
        self.setAccessibleName("Publish")
        self.resize(860, 560)
        layout = QVBoxLayout(self)
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
        self.counts.setAccessibleName("What would change")
        self.counts.setToolTip("How many occurrences appear, vanish and move, and which running ones stay")
        layout.addWidget(self.counts)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Local", "UTC", "What happens"])
        self.tree.setAccessibleName("Occurrences that would change")
        self.tree.setToolTip(
            "Each occurrence publishing would add, remove or move, and the running ones it leaves alone"
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
        self.publish_button.setToolTip("Publish this revision: it governs from its cutover on")
        self.publish_button.setAccessibleName("Publish")
        self.publish_button.setEnabled(False)
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        cancel.setToolTip("Close without publishing")
        cancel.setAccessibleName("Cancel")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._reader = LatestOnly(self, describe=problem_text)
        self._reader.done.connect(self.show_diff)
        self._reader.failed.connect(self._on_failed)
        self._write = DialogWrite(self.buttons, self._published, self._refused, self)
        self.refresh()

    # --- the diff ---------------------------------------------------------------
    def refresh(self) -> None:
        """Work the diff out again (off the GUI thread)."""
        ctx, spec, now = self.ctx, self.spec, self.ctx.clock.now()

        def work() -> FutureDiff:
            with ctx.ledger.read() as session:
                return future_diff(session, spec, now)

        self.publish_button.setEnabled(False)
        self._reader.submit(work)

    def wait(self, msecs: int = 30_000) -> bool:
        return self._reader.wait(msecs)

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
        self.tree.clear()
        for key, glyph, heading, colour in GROUPS:
            rows: tuple[Any, ...] = getattr(diff, key)
            group = QTreeWidgetItem([f"{glyph} {len(rows)} {heading}", "", ""])
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
        """Publish the revision; a refusal is shown here and nothing is written."""
        from core.ledger.publish import publish

        ledger, spec, clock = self.ctx.ledger, self.spec, self.ctx.clock

        def write() -> PublishResult:
            with ledger.write() as session:
                return publish(session, spec, clock)

        self.problem.hide()
        self._write.start(write)

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
