"""What an alert says: a webhook's JSON body, and the one line a person reads.

An alert tells of one occurrence entering FAILED, UNKNOWN_EFFECT or
MISFIRE_EXPIRED, or of a range of missed occurrences expired at once. Its
``Idempotency-Key`` is the occurrence id and the kind (:func:`idempotency_key`):
the same on every engine and every repeat, so a receiver that keeps keys sees a
repeat as one. The body holds what the outbox row fixed when it was written
(:mod:`core.ledger.alert_outbox`), never a secret. ``text`` is what Slack's and
Matrix's incoming webhooks show.

Pure: nothing here reads a clock, the ledger or the network.
"""

from __future__ import annotations

from typing import Any

#: The webhook body's schema name.
SCHEMA = "alert.v1"

_WORDS = {
    "FAILED": "failed",
    "UNKNOWN_EFFECT": "has an unknown effect",
    "MISFIRE_EXPIRED": "missed a run",
    "TEST": "test alert",
}


def idempotency_key(occurrence_id: str, kind: str) -> str:
    """The key every send of one alert carries: ``occ-…:FAILED``."""
    return f"{occurrence_id}:{kind}"


def alert_text(data: dict[str, Any]) -> str:
    """One line: ``Tidemark: backup.nightly failed (2026-03-01T02:30:00, attempt 3): exited with status 1``."""
    sid, state = data.get("scheduleId", "?"), str(data.get("state", ""))
    if state == "TEST":
        return f"Tidemark: a test alert ({data.get('reason') or 'schedctl alerts test'})"
    if data.get("fromUtc") is not None:
        count = data.get("occurrences")
        many = f"{count:,} runs" if isinstance(count, int) else "runs"
        return (
            f"Tidemark: {sid} missed {many} from {data['fromUtc']} to {data['toUtc']}, "
            f"expired at once: {data.get('reason') or ''}"
        ).rstrip(": ")
    where = [str(data[k]) for k in ("nominalLocal",) if data.get(k)]
    if data.get("attempt"):
        where.append(f"attempt {data['attempt']}")
    said = f"Tidemark: {sid} {_WORDS.get(state, state.lower())}"
    if where:
        said += f" ({', '.join(where)})"
    reason = data.get("reason")
    return f"{said}: {reason}" if reason else said


def webhook_body(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """The JSON a webhook receives: the alert's fields, its key, and ``text``."""
    body: dict[str, Any] = {"schema": SCHEMA, "kind": kind}
    body.update({k: v for k, v in data.items() if v is not None})
    body["idempotencyKey"] = idempotency_key(str(data.get("occurrenceId", "")), kind)
    body["text"] = alert_text(data)
    return body


def mail_subject(data: dict[str, Any]) -> str:
    """``Tidemark: backup.nightly failed``."""
    if data.get("state") == "TEST":
        return "Tidemark: a test alert"
    return f"Tidemark: {data.get('scheduleId', '?')} {_WORDS.get(str(data.get('state', '')), 'alert')}"


def mail_body(data: dict[str, Any], kind: str) -> str:
    """The mail's text: the line, then each field on a line of its own."""
    lines = [alert_text(data), ""]
    lines += [f"{key}: {value}" for key, value in data.items() if value is not None]
    lines.append(f"idempotencyKey: {idempotency_key(str(data.get('occurrenceId', '')), kind)}")
    return "\n".join(lines) + "\n"
