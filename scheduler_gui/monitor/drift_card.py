"""Needs attention for a schedule whose materialized future the installed tz
database would move, or that a newer Tidemark computes otherwise (its first
start on the ledger shadowed the future): one card with the two decisions of
``schedctl drift``.

"Keep as materialized" records the acknowledgement at once. "Republish under
2027a" first shows the diff of the future (which runs move, appear, vanish),
read off the GUI thread; "Publish revision N" then publishes the same spec
with its cutover now, and "Cancel" leaves everything as it was. Both decisions
are core commands (:mod:`core.ledger.drift_attention`); the card only words them.
"""

from __future__ import annotations

from enum import StrEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from core.clock import Clock
from core.ledger.db import Ledger
from core.ledger.drift_attention import DriftAttention, attention_key, keep_materialized, republish, shift_text
from core.ledger.future_diff import FutureDiff
from scheduler_gui.a11y import accessible
from scheduler_gui.monitor.decision_row import decision_row, result_label
from scheduler_gui.monitor.timetext import nominal_text, utc_text
from scheduler_gui.status_style import look

#: Moves listed on the card at most (the rest are counted).
MOVES_SHOWN = 5


class DriftAction(StrEnum):
    """What a person can do on a drift card."""

    KEEP = "keep"
    PREVIEW = "preview"
    REPUBLISH = "republish"


def decide_drift(ledger: Ledger, clock: Clock, schedule_id: str, action: DriftAction, note: str | None) -> str:
    """Carry out a decision about a drifted schedule; returns what was done, in words."""
    if action is DriftAction.KEEP:
        item = keep_materialized(ledger, schedule_id, clock, note)
        return f"{schedule_id}: kept {item.runs_kept} as materialized"
    if action is not DriftAction.REPUBLISH:
        raise ValueError(f"not a decision: {action!r}")
    result = republish(ledger, schedule_id, clock)
    return f"{schedule_id}: republished as revision {result.revision} under tzdata {result.tzdb_version}"


def _runs(n: int, verb: str) -> str:
    """``1 run moves``, ``3 runs move``."""
    return f"{n:,} run {verb}s" if n == 1 else f"{n:,} runs {verb}"


def outlook_text(diff: FutureDiff) -> str:
    """The diff of the future in words: counts, then the first runs that move (their wall
    time, the instant planned → the instant under the installed tzdata), appear and vanish."""
    head = (
        f"Republishing as revision {diff.revision} (cutover {utc_text(diff.cutover_at)}) changes the future until "
        f"{utc_text(diff.end)}: {_runs(len(diff.moves), 'move')}, {_runs(len(diff.appear), 'appear')}, "
        f"{_runs(len(diff.vanish), 'vanish')}."
    )
    lines = [head]
    for move in diff.moves[:MOVES_SHOWN]:
        shift = move.shift
        by = f" ({'+' if shift.total_seconds() >= 0 else '−'}{shift_text(int(shift.total_seconds()))})" if shift else ""
        lines.append(
            f"  {nominal_text(move.before.nominal_local, move.before.fold_ordinal)}: "
            f"{utc_text(move.before.resolved_utc)} → {utc_text(move.after.resolved_utc)}{by}"
        )
    if len(diff.moves) > MOVES_SHOWN:
        lines.append(f"  … and {len(diff.moves) - MOVES_SHOWN:,} more")
    lines += [f"  appears: {nominal_text(r.nominal_local, r.fold_ordinal)}" for r in diff.appear[:MOVES_SHOWN]]
    lines += [f"  vanishes: {nominal_text(r.nominal_local, r.fold_ordinal)}" for r in diff.vanish[:MOVES_SHOWN]]
    return "\n".join(lines)


def card_words(item: DriftAttention) -> tuple[str, str, str]:
    """The card's heading, the sentence after what changes, and what republishing follows."""
    if item.new_code:
        return (
            "New Tidemark version",
            f"The runs keep what Tidemark {item.from_engine_version} planned until you decide.",
            f"Tidemark {item.engine_version}",
        )
    return (
        "Time zone data changed",
        f"The runs keep the instants they were planned at (tzdata {', '.join(item.from_tzdb) or 'older'}) "
        "until you decide.",
        "the installed tzdata",
    )


class DriftCard(QFrame):
    """A drifted schedule waiting for a decision: what moves, a note, Keep or Republish."""

    decided = Signal(str, str, str)
    """attention key, action (a :class:`DriftAction`), note."""

    def __init__(self, item: DriftAttention, parent: QWidget | None = None, *, refused: str | None = None) -> None:
        super().__init__(parent)
        self.item = item
        #: Why this window may not decide (its database role), or None.
        self.refused = refused
        self.key = attention_key(item.schedule_id)
        colour = look("SHIFTED").colour
        self.setObjectName("driftCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#driftCard {{ border: 1px solid {colour}; border-radius: 6px; }}")
        heading, kept, follows = card_words(item)
        self.setAccessibleName(f"{heading.lower()}: {item.schedule_id}")
        layout = QVBoxLayout(self)
        self.title = QLabel(
            f"<b style='color:{colour}'>↷ {heading}</b> · <b>{item.schedule_id}</b> · found {utc_text(item.found_at)}"
        )
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setAccessibleName(f"{heading}, {item.schedule_id}")
        layout.addWidget(self.title)
        self.what = QLabel(f"{item.text}. {kept}")
        self.what.setWordWrap(True)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if item.new_code:
            accessible(
                self.what, "What the new Tidemark version changes", "How many planned runs it computes otherwise"
            )
        else:
            accessible(
                self.what, "What the new time zone data changes", "Which planned runs would move, and by how much"
            )
        layout.addWidget(self.what)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Note (optional): why you keep them…")
        accessible(self.note, "Note for the decision", "Recorded in the ledger with Keep as materialized")
        layout.addWidget(self.note)
        row, self.buttons = decision_row(
            (
                (
                    DriftAction.KEEP,
                    "Keep as materialized",
                    "The planned runs keep their instants; take this off the list (recorded with your note)",
                ),
                (
                    DriftAction.PREVIEW,
                    item.republish_label,
                    f"See how the future changes first, then publish the same spec again under {follows}",
                ),
            ),
            self._decide,
        )
        self.note.setEnabled(refused is None)
        for button in self.buttons.values():
            button.setEnabled(refused is None)
            if refused is not None:
                button.setToolTip(f"{button.toolTip()}. Not here: {refused}")
        layout.addLayout(row)
        self.outlook = QLabel()
        self.outlook.setWordWrap(True)
        self.outlook.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        accessible(self.outlook, "Diff of the future", "What republishing would change, before it is published")
        self.outlook.hide()
        layout.addWidget(self.outlook)
        confirm = QHBoxLayout()
        self.publish = QPushButton("Publish")
        accessible(self.publish, "Publish the new revision", "Publish the same spec again, cutover now")
        self.publish.clicked.connect(lambda: self._decide(DriftAction.REPUBLISH))
        self.cancel = QPushButton("Cancel")
        accessible(self.cancel, "Cancel republishing", "Publish nothing; the card stays")
        self.cancel.clicked.connect(self._hide_outlook)
        confirm.addWidget(self.publish)
        confirm.addWidget(self.cancel)
        confirm.addStretch(1)
        layout.addLayout(confirm)
        self.publish.hide()
        self.cancel.hide()
        self.message = result_label()
        layout.addWidget(self.message)

    def show_outlook(self, diff: FutureDiff) -> None:
        """Show what republishing changes, with Publish and Cancel."""
        self.outlook.setText(outlook_text(diff))
        self.outlook.show()
        self.publish.setText(f"Publish revision {diff.revision}")
        self.publish.setAccessibleName(f"Publish revision {diff.revision}")
        self.publish.show()
        self.cancel.show()
        self.message.hide()
        self._enable(True)

    def _hide_outlook(self) -> None:
        for widget in (self.outlook, self.publish, self.cancel):
            widget.hide()

    def _enable(self, on: bool) -> None:
        for button in (*self.buttons.values(), self.publish, self.cancel):
            button.setEnabled(on)

    def _decide(self, action: DriftAction) -> None:
        self._enable(False)
        self.message.setStyleSheet("")
        self.message.setText("Reading the future…" if action is DriftAction.PREVIEW else "Recording…")
        self.message.show()
        self.decided.emit(self.key, action.value, self.note.text().strip())

    def show_error(self, message: str) -> None:
        self._enable(True)
        self.message.setStyleSheet(f"color: {look('FAILED').colour};")
        self.message.setText(message)
        self.message.show()
