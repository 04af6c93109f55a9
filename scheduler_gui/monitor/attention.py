"""Needs attention: one card per occurrence that waits for a person's decision.

An UNKNOWN_EFFECT occurrence (a non-idempotent task whose outcome was lost)
offers the three reconcile decisions of ``schedctl reconcile``: It happened ·
It did not happen, retry · Abandon. A FAILED one (attempts used up) offers Run
it again (a recorded backfill of the same obligation, or a new manual run for
a manual one) · Acknowledge. Every action takes an optional note, runs off the
GUI thread, and is recorded in the ledger; a refusal is shown on its card.

A schedule whose planned runs the installed time zone data would move gets a
card of its own (:mod:`scheduler_gui.monitor.drift_card`): Keep as
materialized · Republish under the new release, its diff of the future first.

Each card says who decided what before ("alice@alpha said it did not happen")
and, when the schedule is held, who held it ("paused by bob@beta"): the words
are the core's (:mod:`core.ledger.event_words`), the actors the ledger's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock
from core.engine.admin import acknowledge_failed, retry_failed
from core.engine.reconcile import Decision, reconcile
from core.ledger.alert_queries import FailingRoute
from core.ledger.attention_queries import AttentionItem
from core.ledger.db import Ledger
from core.ledger.drift_attention import DriftAttention, attention_key
from core.ledger.event_types import EventKind
from core.ledger.monitor_queries import AttemptView
from core.ledger.monitor_reads import AttentionQueue, attention_queue, republish_preview
from core.ledger.queries import EventView
from core.ledger.states import OccurrenceState
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.alert_route_card import AlertRouteCard
from scheduler_gui.monitor.authors import decision_text, held_text
from scheduler_gui.monitor.background import Background, describe_error, ledger_work
from scheduler_gui.monitor.decision_row import decision_row, result_label
from scheduler_gui.monitor.drift_card import DriftAction, DriftCard, decide_drift
from scheduler_gui.monitor.held_card import HeldCard
from scheduler_gui.monitor.timetext import age_text, local_text, run_time_text, tabular_font, utc_seconds_text, utc_text
from scheduler_gui.rights_gate import refusal
from scheduler_gui.status_style import look

#: Lines of each output tail shown on a card (the detail panel has all of it).
TAIL_LINES = 6
#: How often the cards' ages are brought up to date between readings of the ledger.
AGES_MS = 30_000
#: What the page says when nothing waits: what it is for, and where to look instead.
EMPTY_TEXT = (
    "Nothing needs your attention. An occurrence comes here when its attempts are used up, or when a "
    "task that must not run twice lost its outcome and nobody can tell whether it happened; you then "
    "decide what to record. To see every run, open Occurrences (View ▸ Occurrences, Ctrl+2)."
)


def no_output_text(attempt: AttemptView) -> str:
    """What an attempt without output says: that it printed nothing, only when that is known. A lost
    attempt's output was with the engine that stopped, so nobody can say what it printed."""
    if attempt.error_class == "lost":
        return (
            "Its output was not kept: the engine running it stopped before the task ended, "
            "so what it printed is not known."
        )
    return "It printed nothing."


class Action(StrEnum):
    """What a person can decide on a card: the three :class:`Decision` values, and two more."""

    HAPPENED = Decision.HAPPENED.value
    NOT_HAPPENED = Decision.NOT_HAPPENED.value
    ABANDON = Decision.ABANDON.value
    RETRY = "retry"
    ACKNOWLEDGE = "acknowledge"


_BUTTONS: dict[OccurrenceState, tuple[tuple[Action, str, str], ...]] = {
    OccurrenceState.UNKNOWN_EFFECT: (
        (Action.HAPPENED, "It happened", "The effect took place: record it as succeeded"),
        (
            Action.NOT_HAPPENED,
            "It did not happen, retry",
            "The effect did not take place: run it again now (a new attempt of the same occurrence)",
        ),
        (Action.ABANDON, "Abandon", "Give up on this occurrence: record it as failed"),
    ),
    OccurrenceState.FAILED: (
        (
            Action.RETRY,
            "Run it again",
            "Run this obligation once more, as a recorded backfill (a new manual run for a manual one)",
        ),
        (Action.ACKNOWLEDGE, "Acknowledge", "You have seen this failure: take it off the list, keep it in the ledger"),
    ),
}


def decide(ledger: Ledger, clock: Clock, item: AttentionItem, action: Action, note: str | None) -> str:
    """Carry out a person's decision on an attention item; returns what was done, in words.

    Raises :class:`~core.errors.UserError` when the ledger refuses (someone
    else decided first, the schedule is paused...).
    """
    occ = item.occurrence
    if action in (Action.HAPPENED, Action.NOT_HAPPENED, Action.ABANDON):
        done = reconcile(ledger, occ.occurrence_id, Decision(action), clock, note)
        return f"{occ.occurrence_id} is now {done.new.value}"
    if action is Action.ACKNOWLEDGE:
        acknowledge_failed(ledger, occ.occurrence_id, clock, note)
        return f"{occ.occurrence_id} acknowledged"
    if action is not Action.RETRY:
        raise ValueError(f"unknown action {action!r}")
    new_id = retry_failed(ledger, occ.occurrence_id, clock, note)
    return f"{occ.occurrence_id} runs again as {new_id}"


def attempt_text(item: AttentionItem, now: datetime | None = None) -> str:
    """``Attempt 2 on alpha:4242: timeout · started 2027-03-01 12:05:00Z, 3 min ago · ran 1 min``:
    the attempt's own age (now − its start; as of the reading when ``now`` is None),
    not how long the card has waited."""
    a = item.last_attempt
    if a is None:
        return "No attempt was recorded."
    text = f"Attempt {a.attempt_number} on {a.worker}: {a.ending()} · started {utc_seconds_text(a.started_at)}"
    age = item.attempt_age if now is None else max(now - a.started_at, timedelta(0))
    if age is not None:
        text += f", {age_text(age)} ago"
    if a.duration is not None:
        text += f" · ran {run_time_text(a.duration)}"
    return text


#: Events that move a schedule's gate (a card says who held its schedule).
_GATE_KINDS = frozenset(
    {EventKind.SCHEDULE_PAUSED.value, EventKind.SCHEDULE_RESUMED.value, EventKind.SCHEDULE_DISABLED.value}
)


def decisions_text(item: AttentionItem) -> str:
    """The card's lines of earlier decisions, newest last; older ones are counted, not listed."""
    lines = ["Earlier decisions:"]
    if item.older_decisions:
        n = item.older_decisions
        lines.append(f"{n:,} older decision{'s' if n != 1 else ''} (the History of its detail lists them all)")
    lines.extend(decision_text(d) for d in item.decisions)
    return "\n".join(lines)


def _tail(text: str | None) -> str:
    if not text:
        return ""
    lines = text.rstrip("\n").splitlines()
    return "\n".join(lines[-TAIL_LINES:])


class AttentionCard(QFrame):
    """One occurrence waiting for a decision: what is known, a note, the actions."""

    decided = Signal(str, str, str)
    """occurrence id, action, note."""

    def __init__(
        self,
        item: AttentionItem,
        zone: str,
        parent: QWidget | None = None,
        *,
        held: EventView | None = None,
        refused: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.item = item
        #: Why the ledger does not let this window decide (the role's kind, a read-only file), else None.
        self.refused = refused
        #: The event that paused or disabled the schedule (None while it is active).
        self.held = held
        occ = item.occurrence
        state_look = look(occ.state.value)
        self.setObjectName("attentionCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(f"#attentionCard {{ border: 1px solid {state_look.colour}; border-radius: 6px; }}")
        self.setAccessibleName(f"{state_look.word}: {occ.schedule_id} {occ.occurrence_id}")
        layout = QVBoxLayout(self)

        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setToolTip("How long it has waited for a decision: since its last attempt ended")
        layout.addWidget(self.title)
        self._add_facts(layout, zone)
        a = item.last_attempt
        self.attempt = QLabel()
        accessible(
            self.attempt,
            "Last attempt",
            "The last attempt: where it ran, how it ended, when it started and how long it ran",
        )
        layout.addWidget(self.attempt)
        if a is not None:
            output = "\n".join(
                part
                for part in (
                    f"stdout:\n{_tail(a.stdout_tail)}" if a.stdout_tail else "",
                    f"stderr:\n{_tail(a.stderr_tail)}" if a.stderr_tail else "",
                )
                if part
            )
            if output:
                box = QPlainTextEdit(output)
                box.setReadOnly(True)
                box.setFont(QFont(tabular_font()))
                box.setMaximumHeight(box.fontMetrics().lineSpacing() * (min(output.count("\n") + 1, 8) + 1) + 8)
                accessible(box, "Output of the last attempt", "The end of what the last attempt printed")
                layout.addWidget(box)
            else:
                layout.addWidget(QLabel(no_output_text(a)))

        self.history: QLabel | None = None
        if item.decisions:
            self.history = QLabel(decisions_text(item))
            self.history.setWordWrap(True)
            self.history.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            accessible(
                self.history, "Earlier decisions", "What people already decided about this occurrence, newest last"
            )
            layout.addWidget(self.history)

        self._add_decisions(layout)
        self.message = result_label()
        layout.addWidget(self.message)
        self.show_ages(None)

    def _add_decisions(self, layout: QVBoxLayout) -> None:
        """The note and a button per decision; off, each saying why, when the ledger refuses this window."""
        refused = self.refused
        self.note = QLineEdit()
        self.note.setPlaceholderText("Note (optional): what you checked, what you found…")
        accessible(
            self.note, "Note for the decision", "Recorded in the ledger with your decision, your user name and host"
        )
        self.note.setEnabled(refused is None)
        layout.addWidget(self.note)
        choices = [
            (action, text, tip if refused is None else f"{tip}. Not here: {refused}")
            for action, text, tip in _BUTTONS.get(self.item.occurrence.state, ())
        ]
        row, self.buttons = decision_row(choices, self._decide)
        for button in self.buttons.values():
            button.setEnabled(refused is None)
        layout.addLayout(row)

    def _add_facts(self, layout: QVBoxLayout, zone: str) -> None:
        """When it was due, why it waits, and who holds its schedule (when someone does)."""
        occ = self.item.occurrence
        instant = occ.resolved_utc or occ.position_utc
        when = QLabel(f"{local_text(instant, zone)} · {utc_text(instant)} · {occ.occurrence_id}")
        when.setFont(tabular_font())
        when.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        when.setAccessibleName("Scheduled time and occurrence id")
        layout.addWidget(when)
        if occ.reason:
            reason = QLabel(occ.reason)
            reason.setWordWrap(True)
            reason.setAccessibleName("Why it waits")
            layout.addWidget(reason)
        if self.held is not None:
            held = QLabel(held_text(self.held))
            held.setWordWrap(True)
            held.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            accessible(held, "Schedule held", "Who paused or disabled this occurrence's schedule, and when")
            layout.addWidget(held)

    def show_ages(self, now: datetime | None) -> None:
        """Write the waiting time and the attempt's age as of ``now`` (None: as of the reading)."""
        item, occ = self.item, self.item.occurrence
        state_look = look(occ.state.value)
        waited = age_text(item.age if now is None else max(now - item.since, timedelta(0)))
        self.title.setText(
            f"<b style='color:{state_look.colour}'>{state_look.label}</b> · <b>{occ.schedule_id}</b> · waiting {waited}"
        )
        self.title.setAccessibleName(f"{state_look.word}, {occ.schedule_id}, waiting {waited}")
        self.attempt.setText(attempt_text(item, now))

    def _decide(self, action: Action) -> None:
        for button in self.buttons.values():
            button.setEnabled(False)
        self.message.setStyleSheet("")
        self.message.setText("Recording…")
        self.message.show()
        self.decided.emit(self.item.occurrence_id, action, self.note.text().strip())

    def show_error(self, message: str) -> None:
        for button in self.buttons.values():
            button.setEnabled(self.refused is None)
        self.message.setStyleSheet(f"color: {look('FAILED').colour};")
        self.message.setText(message)
        self.message.show()


def _same(a: AttentionItem, b: AttentionItem) -> bool:
    """Nothing a card shows has changed but the age."""
    last_a = a.last_attempt.attempt_id if a.last_attempt is not None else None
    last_b = b.last_attempt.attempt_id if b.last_attempt is not None else None
    return (a.state, a.occurrence.updated_at, last_a) == (b.state, b.occurrence.updated_at, last_b)


def _held_id(event: EventView | None) -> int | None:
    return event.id if event is not None else None


def _drop(card: QWidget) -> None:
    card.setParent(None)
    card.deleteLater()


class AttentionView(QWidget):
    """Every occurrence that needs a person, the longest-waiting first."""

    countChanged = Signal(int)
    """The badge value: how many occurrences wait."""
    decisionRecorded = Signal(str, str)
    """occurrence id, what was done (in words)."""
    errorOccurred = Signal(str)
    loaded = Signal()

    def __init__(self, ctx: AppContext, watcher: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attentionView")
        self._ctx = ctx
        self._watcher = watcher
        self._background = LatestOnly(self, describe=describe_error)
        self._background.done.connect(self._loaded)
        self._background.failed.connect(self._failed)
        self._actions = Background(self)
        self._items: list[AttentionItem] = []
        self._drifts: list[DriftAttention] = []
        self.cards: dict[str, AttentionCard] = {}
        #: Drifted schedules' cards, by attention key (core.ledger.drift_attention.attention_key).
        self.drift_cards: dict[str, DriftCard] = {}
        #: Cards of the schedules the engines hold, by schedule.
        self.held_cards: dict[str, HeldCard] = {}
        self.route_cards: dict[str, AlertRouteCard] = {}
        self.heading = QLabel("Needs attention")
        heading_font = self.heading.font()
        heading_font.setPointSizeF(heading_font.pointSizeF() * 1.3)
        heading_font.setBold(True)
        self.heading.setFont(heading_font)
        self.heading.setAccessibleName("Needs attention")
        intro = QLabel(
            "Occurrences whose outcome nobody can vouch for, failures nobody has looked at yet, schedules "
            "whose planned runs new time zone data or a new Tidemark version would place otherwise, and "
            "schedules the engines hold until a corrected revision is published. Decide; "
            "your decision and note are recorded in the ledger."
        )
        intro.setWordWrap(True)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Ledger problem")
        self.error_label.hide()
        self.empty_label = QLabel(EMPTY_TEXT)
        # At the top, under the heading, like every other page's first line: not floating mid-page.
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.empty_label.setWordWrap(True)
        self.empty_label.setAccessibleName("Nothing needs attention")
        self.empty_label.hide()
        self._list = QWidget()
        self._list_layout = QVBoxLayout(self._list)
        self._list_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self._list)
        accessible(
            scroll,
            "Occurrences that need attention",
            "One card per occurrence waiting for a decision, each with what is known and the actions",
        )
        self.scroll_area = scroll
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(intro)
        layout.addWidget(self.error_label)
        # One of the two takes the page's height: the empty state (its text at the top) or the cards.
        layout.addWidget(self.empty_label, 1)
        layout.addWidget(scroll, 1)
        self._ages = QTimer(self)
        self._ages.setInterval(AGES_MS)
        self._ages.timeout.connect(self.show_ages)
        self._ages.start()
        if watcher is not None:
            # Bound methods, not lambdas: Qt drops the connections when this view is deleted.
            watcher.attentionCountChanged.connect(self._reload_for)
            watcher.newAttention.connect(self._reload_for)
            watcher.eventsArrived.connect(self._on_events)
        self.reload()

    def _reload_for(self, _change: object) -> None:
        self.reload()

    @property
    def count(self) -> int:
        """The badge value for the sidebar."""
        return len(self._items) + len(self._drifts) + len(self.held_cards) + len(self.route_cards)

    @property
    def items(self) -> list[AttentionItem]:
        return list(self._items)

    def reload(self) -> None:
        """Read the queue again (off the GUI thread)."""
        now = self._ctx.clock.now()

        def work() -> AttentionQueue:
            return attention_queue(self._ctx.ledger, now)

        self._background.submit(ledger_work(work))

    def refresh(self) -> None:
        """Read the queue again (F5)."""
        self.reload()

    def wait(self, msecs: int = 30_000) -> bool:
        return self._actions.wait(msecs) and self._background.wait(msecs)

    def show_ages(self) -> None:
        """Bring every card's waiting time and attempt age up to the clock's now (between readings)."""
        now = self._ctx.clock.now()
        for card in self.cards.values():
            card.show_ages(now)

    def _on_events(self, events: list[Any]) -> None:
        ids = set(self.cards)
        # A card also says who paused or disabled its schedule: a gate's move is read again.
        schedules = {card.item.occurrence.schedule_id for card in self.cards.values()}
        if any(
            getattr(e, "occurrence_id", None) in ids
            or (getattr(e, "kind", None) in _GATE_KINDS and getattr(e, "schedule_id", None) in schedules)
            for e in events
        ):
            self.reload()

    def _loaded(self, loaded: AttentionQueue) -> None:
        self.error_label.hide()
        before = self.count
        self._items = loaded.items
        self._load_drifts(loaded.drifts)
        self._load_held(loaded.held_schedules)
        self._load_routes(loaded.failing_routes)
        # Cards whose occurrence is unchanged stay as they are: a note being typed survives a reload.
        kept: dict[str, AttentionCard] = {}
        for item in loaded.items:
            card = self.cards.pop(item.occurrence_id, None)
            held = loaded.held.get(item.occurrence.schedule_id)
            if card is not None and _same(card.item, item) and _held_id(card.held) == _held_id(held):
                card.item = item  # the ages are as of this reading
                card.show_ages(None)
                kept[item.occurrence_id] = card
                continue
            if card is not None:
                _drop(card)
            zone = loaded.zones.get(item.occurrence.schedule_id, "UTC")
            card = AttentionCard(item, zone, held=held, refused=refusal(self._ctx.rights, "decide"))
            card.decided.connect(self._decide)
            kept[item.occurrence_id] = card
        for card in self.cards.values():
            _drop(card)
        self.cards = kept
        shown: list[QWidget] = [
            *self.held_cards.values(),
            *self.route_cards.values(),
            *self.drift_cards.values(),
            *kept.values(),
        ]
        for widget in shown:
            self._list_layout.removeWidget(widget)
        for position, widget in enumerate(shown):
            self._list_layout.insertWidget(position, widget)
        n = self.count
        self.heading.setText(f"Needs attention ({n:,})" if n else "Needs attention")
        self.empty_label.setVisible(n == 0)
        self.scroll_area.setVisible(n > 0)
        if n != before:
            self.countChanged.emit(n)
        self.loaded.emit()

    def _load_drifts(self, drifts: list[DriftAttention]) -> None:
        """Cards for drifted schedules, first: one whose finding is unchanged stays (its note, its diff)."""
        self._drifts = drifts
        kept: dict[str, DriftCard] = {}
        for item in drifts:
            card = self.drift_cards.pop(attention_key(item.schedule_id), None)
            if card is not None and card.item.event_id != item.event_id:
                _drop(card)
                card = None
            if card is None:
                card = DriftCard(item, refused=refusal(self._ctx.rights, "decide"))
                card.decided.connect(self._decide_drift)
            kept[card.key] = card
        for card in self.drift_cards.values():
            _drop(card)
        self.drift_cards = kept

    def _load_held(self, held: dict[str, str]) -> None:
        """Cards for the schedules the engines hold, first: one whose reason is unchanged stays."""
        kept: dict[str, HeldCard] = {}
        for sid, why in sorted(held.items()):
            card = self.held_cards.pop(sid, None)
            if card is not None and card.why != why:
                _drop(card)
                card = None
            kept[sid] = card if card is not None else HeldCard(sid, why)
        for card in self.held_cards.values():
            _drop(card)
        self.held_cards = kept

    def _load_routes(self, failing: list[FailingRoute]) -> None:
        """Cards for the alert routes that keep failing: one whose count and error are unchanged stays."""
        kept: dict[str, AlertRouteCard] = {}
        for item in failing:
            card = self.route_cards.pop(item.route, None)
            if card is not None and card.failing != item:
                _drop(card)
                card = None
            kept[item.route] = card if card is not None else AlertRouteCard(item)
        for card in self.route_cards.values():
            _drop(card)
        self.route_cards = kept

    def _decide_drift(self, key: str, action: str, note: str) -> None:
        card = self.drift_cards.get(key)
        if card is None:
            return
        sid, clock, ledger_owner = card.item.schedule_id, self._ctx.clock, self._ctx

        def failed(message: str) -> None:
            if key in self.drift_cards:
                self.drift_cards[key].show_error(message)
            self.errorOccurred.emit(message)

        if DriftAction(action) is DriftAction.PREVIEW:
            now = clock.now()
            self._actions.submit(
                f"drift-{sid}",
                lambda: republish_preview(ledger_owner.ledger, sid, now)[1],
                card.show_outlook,
                failed,
            )
            return

        def done(words: str) -> None:
            self.decisionRecorded.emit(key, words)
            self.reload()

        self._actions.submit(
            f"drift-{sid}",
            lambda: decide_drift(ledger_owner.ledger, clock, sid, DriftAction(action), note or None),
            done,
            failed,
        )

    def _failed(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self.errorOccurred.emit(message)

    def _decide(self, occurrence_id: str, action: str, note: str) -> None:
        item = next((i for i in self._items if i.occurrence_id == occurrence_id), None)
        if item is None:
            return
        ledger_owner, clock = self._ctx, self._ctx.clock

        def work() -> str:
            return decide(ledger_owner.ledger, clock, item, Action(action), note or None)

        def done(words: str) -> None:
            self.decisionRecorded.emit(occurrence_id, words)
            self.reload()

        def failed(message: str) -> None:
            card = self.cards.get(occurrence_id)
            if card is not None:
                card.show_error(message)
            self.errorOccurred.emit(message)

        self._actions.submit(f"decide-{occurrence_id}", work, done, failed)
