"""Who decided what, as the monitor shows it: a person's decision on an occurrence, and who
holds a schedule. The words are the core's (:mod:`core.ledger.event_words`); the times are
the monitor's (UTC, minutes)."""

from __future__ import annotations

from core.ledger.attention_queries import PastDecision
from core.ledger.event_words import action_sentence, decision_sentence
from core.ledger.queries import EventView
from scheduler_gui.monitor.timetext import utc_text


def _with_note(text: str, note: object) -> str:
    return f"{text} · note: {note}" if note else text


def decision_text(decision: PastDecision) -> str:
    """``alice@alpha said it did not happen, 2027-03-01 12:05Z · note: mailbox checked``."""
    return _with_note(action_sentence(decision.action, decision.actor, utc_text(decision.at)), decision.note)


def event_decision_text(event: EventView) -> str | None:
    """A person's decision an event records, in a sentence naming them (with its note);
    None for an event that is no person's decision."""
    sentence = decision_sentence(event.kind, event.data, event.actor, utc_text(event.at))
    return None if sentence is None else _with_note(sentence, event.data.get("note"))


def held_text(event: EventView) -> str:
    """``Schedule paused by bob@beta, 2027-03-01 09:12Z · note: disk full``."""
    return f"Schedule {event_decision_text(event)}"
