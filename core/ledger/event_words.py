"""The event log in a person's words: what each event says happened, its note, and who did it.

Pure functions of an event's kind, its ``data`` (as :func:`core.ledger.event_types.stored_data`
writes it) and its actor: ``schedctl events``, the detail panel and the attention cards
word events here, so that they say the same thing the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.counts import counted
from core.ledger.event_types import EventKind
from core.team.actor import Actor

#: The actor of an event written before actors were recorded (migration 0008).
NO_ACTOR = "—"

_K = EventKind

#: A reconciliation's decision (core.engine.reconcile.Decision values), as the log words it.
_DECIDED = {"happened": "it happened", "not-happened": "did not happen", "abandon": "gave up on it"}
#: The same, as a sentence about the person: "alice@alpha said it did not happen".
_SAID = {"happened": "said it happened", "not-happened": "said it did not happen", "abandon": "gave up on it"}
#: What a person did about a failure (core.engine.admin), as a sentence about them.
_DEALT = {"acknowledged": "acknowledged the failure", "retried": "ran it again"}
#: Gate moves and publishing, as "<what> by <who>".
_BY = {
    _K.SCHEDULE_PAUSED.value: "paused",
    _K.SCHEDULE_RESUMED.value: "resumed",
    _K.SCHEDULE_DISABLED.value: "disabled",
}


def claimed_text(actor: Actor | None) -> str:
    """``alice@alpha``: the OS user and host the writing client said it was, or ``—`` for an event
    from before actors were recorded."""
    return NO_ACTOR if actor is None else f"{actor.user}@{actor.host}"


def role_text(actor: Actor | None) -> str:
    """The database role the database recorded (PostgreSQL), or ``—`` (SQLite, or before 0008)."""
    return NO_ACTOR if actor is None or actor.role is None else actor.role


def actor_text(actor: Actor | None) -> str:
    """Who wrote an event, saying which part is whose word: ``alice@alpha (claimed; database role
    alice)`` on PostgreSQL, where the database records the role and the client says the rest;
    ``alice@alpha`` without a role (SQLite); ``—`` for an event from before actors were recorded."""
    if actor is None or actor.role is None:
        return claimed_text(actor)
    return f"{claimed_text(actor)} (claimed; database role {actor.role})"


def _count(n: Any, word: str) -> str:
    return counted(n if isinstance(n, int) else 0, word)


def _short(engine: Any) -> str:
    """An engine's id as people read it: its first eight characters."""
    return str(engine)[:8]


def _published(d: Mapping[str, Any]) -> str:
    cancelled = d.get("cancelled")
    tail = f", cancelling {_count(cancelled, 'occurrence')}" if cancelled else ""
    return f"published revision {d.get('revision')}{tail}"


def _transitioned(d: Mapping[str, Any]) -> str:
    decision = d.get("decision")
    if decision:
        return f"reconciled: {_DECIDED.get(str(decision), str(decision))}"
    return f"{d.get('from')} → {d.get('to')}"


def _created(d: Mapping[str, Any]) -> str:
    kind = d.get("kind")
    if kind == "manual":
        return "run now"
    if kind == "backfill":
        return f"backfill of {d['of']}" if d.get("of") else "backfill"
    return "next run appointed"


def _acknowledged(d: Mapping[str, Any]) -> str:
    if d.get("action") == "retried":
        return f"failure: run again as {d.get('retriedAs')}" if d.get("retriedAs") else "failure: run again"
    return "failure acknowledged"


def _expired(d: Mapping[str, Any]) -> str:
    many = _count(d["occurrences"], "occurrence") if isinstance(d.get("occurrences"), int) else "occurrences"
    return f"expired {many} from {d.get('fromUtc')} to {d.get('toUtc')}"


_WHAT: dict[str, Callable[[Mapping[str, Any]], str]] = {
    _K.SCHEDULE_PUBLISHED.value: _published,
    _K.SCHEDULE_PAUSED.value: lambda d: "paused",
    _K.SCHEDULE_RESUMED.value: lambda d: "resumed",
    _K.SCHEDULE_DISABLED.value: lambda d: "disabled",
    _K.SCHEDULE_UNREADABLE.value: lambda d: f"held: revision {d.get('revision')} cannot be read or expanded",
    _K.SCHEDULE_DRIFT_FOUND.value: lambda d: (
        f"tzdata {d.get('tzdbVersion')} would move {_count(d.get('occurrences'), 'future run')}; kept as materialized"
    ),
    _K.SCHEDULE_DRIFT_KEPT.value: lambda d: (
        f"kept {_count(d.get('occurrences'), 'drifted run')} as materialized"
        if d.get("engineVersion") is None
        else f"kept {_count(d.get('occurrences'), 'run')} Tidemark {d.get('engineVersion')} computes otherwise "
        "as materialized"
    ),
    _K.SCHEDULE_SHADOW_DIFFERS.value: lambda d: (
        f"Tidemark {d.get('engineVersion')} computes {_count(d.get('occurrences'), 'future run')} otherwise "
        f"(last engine {d.get('fromEngineVersion')}); kept as materialized"
    ),
    _K.OCCURRENCES_MATERIALIZED.value: lambda d: f"planned {_count(d.get('inserted'), 'occurrence')}",
    _K.OCCURRENCES_EXPIRED.value: _expired,
    _K.OCCURRENCE_TRANSITIONED.value: _transitioned,
    _K.OCCURRENCE_CREATED.value: _created,
    _K.OCCURRENCE_ACKNOWLEDGED.value: _acknowledged,
    _K.ATTEMPT_IGNORED.value: lambda d: f"ignored a late result of attempt {d.get('attempt')}",
    _K.ATTEMPT_ORPHANED.value: lambda d: (
        f"watching attempt {d.get('attempt')}'s task (pid {d.get('pid')} on {d.get('host')})"
    ),
    _K.LEDGER_FENCED.value: lambda d: f"fenced the ledger (epoch {d.get('epoch')})",
    _K.ENGINE_WORKER_DIED.value: lambda d: f"a worker died ({d.get('worker')})",
    _K.ENGINE_FOUND_GONE.value: lambda d: (
        f"found engine {_short(d.get('engine'))} gone (pid {d.get('pid')} on {d.get('host')})"
    ),
    _K.ENGINE_STARTED.value: lambda d: (
        f"engine {_short(d.get('engine'))} started ({d.get('kind')}, pid {d.get('pid')} on {d.get('host')})"
    ),
    _K.ENGINE_STOPPED.value: lambda d: f"engine {_short(d.get('engine'))} stopped",
}

#: The data key whose text is an event's note: a person's own words where there are any,
#: else the reason the ledger recorded.
_NOTE_KEYS = {
    _K.OCCURRENCES_EXPIRED.value: "reason",
    _K.OCCURRENCE_CREATED.value: "reason",
    _K.ATTEMPT_IGNORED.value: "reason",
    _K.ATTEMPT_ORPHANED.value: "reason",
    _K.ENGINE_WORKER_DIED.value: "error",
}


def event_what(kind: str, data: Mapping[str, Any]) -> str:
    """What happened, in a few words: ``paused``, ``reconciled: did not happen``,
    ``published revision 3``. A kind this Tidemark does not know is named as it is."""
    word = _WHAT.get(kind)
    if word is None:
        return kind
    try:
        return word(data)
    except (KeyError, TypeError, ValueError):  # data from another Tidemark: say what is known
        return kind


def event_note(kind: str, data: Mapping[str, Any]) -> str | None:
    """The event's note: a person's words (a pause's, a reconciliation's), else the recorded
    reason or error; None when there is none."""
    if kind == _K.OCCURRENCE_TRANSITIONED.value:
        text = data.get("note") if data.get("decision") else data.get("reason")
    elif kind == _K.SCHEDULE_UNREADABLE.value:
        problems = data.get("problems")
        text = "; ".join(map(str, problems)) if isinstance(problems, list) else None
    else:
        text = data.get(_NOTE_KEYS.get(kind, "note"))
    return str(text) if text not in (None, "") else None


def action_sentence(action: str, actor: Actor | None, when: str) -> str:
    """A person's decision about an occurrence, as a sentence about them: ``action`` is a
    reconciliation's decision (``happened``, ``not-happened``, ``abandon``) or what they did
    about a failure (``acknowledged``, ``retried``). ``alice@alpha said it did not happen, 10:02``."""
    who = actor_text(actor) if actor is not None else "a person"
    return f"{who} {_SAID.get(action) or _DEALT.get(action) or 'decided ' + action}, {when}"


def decision_sentence(kind: str, data: Mapping[str, Any], actor: Actor | None, when: str) -> str | None:
    """Who decided what, as the window says it: ``alice@alpha said it did not happen, 10:02``,
    ``paused by bob@beta, 09:12``; None for an event that is no person's decision.

    ``when`` is the time already worded for the reader (their clock, their format). An event
    from before actors were recorded names nobody: ``a person said it happened``, ``paused``."""
    by = f" by {actor_text(actor)}" if actor is not None else ""
    if kind == _K.OCCURRENCE_TRANSITIONED.value and data.get("decision"):
        return action_sentence(str(data["decision"]), actor, when)
    if kind == _K.OCCURRENCE_ACKNOWLEDGED.value:
        return action_sentence(str(data.get("action") or "acknowledged"), actor, when)
    if kind in _BY:
        return f"{_BY[kind]}{by}, {when}"
    if kind == _K.SCHEDULE_PUBLISHED.value:
        return f"revision {data.get('revision')} published{by}, {when}"
    if kind == _K.OCCURRENCE_CREATED.value and data.get("kind") in ("manual", "backfill"):
        return f"{_created(data)}, asked{by}, {when}"
    return None
