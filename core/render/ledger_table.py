"""What the ledger holds, for people and for programs: schedules, occurrences
and attempts as aligned tables (``schedctl schedules``, ``ledger``,
``attempts``) and as JSON.

Tables show a schedule's times on its own wall clock and in UTC; occurrences
are listed in position order (positionUtc, nominalLocal, foldOrdinal), the
ledger's own order. Task output is shown with control characters escaped, so a
tail can never drive the terminal. Nothing here reads a task's environment:
attempts do not hold it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.errors import UserError
from core.ledger.models import Attempt
from core.ledger.queries import OccurrenceView, ScheduleSummary
from core.ledger.states import OccurrenceKind, OccurrenceState
from core.render.terminal import terminal_safe
from core.time.formats import fmt_local, fmt_utc
from core.time.zones import format_offset, get_zone

_NONE = "—"
_ASCII = str.maketrans({"—": "-", "·": "|", "②": "2", "…": "..."})
#: Characters of an input digest a table shows (JSON has all 64).
DIGEST_CHARS = 12

SCHEDULE_HEADERS = ("Schedule", "State", "Rev", "Zone", "Next due (local)", "Next due (UTC)", "Occurrences")
OCCURRENCE_HEADERS = ("Occurrence", "Schedule", "Rev", "Nominal local", "UTC", "State", "Att", "Why")
ATTEMPT_HEADERS = ("#", "Gen", "Worker", "Epoch", "Started", "Finished", "Exit", "Error", "Digest", "Outcome")


# --- shared ---------------------------------------------------------------------------


def _utc_cell(instant: datetime | None) -> str:
    return f"{instant:%Y-%m-%d %H:%M:%S}Z" if instant is not None else _NONE


def _local_cell(instant: datetime | None, zone_name: str) -> str:
    if instant is None:
        return _NONE
    try:
        local = instant.astimezone(get_zone(zone_name))
    except UserError:  # a zone this tzdata no longer has: UTC is still true
        return _NONE
    abbr = local.tzname() or ""
    label = abbr if abbr and abbr[0] not in "+-" else "UTC" + format_offset(local.utcoffset())
    return f"{local:%Y-%m-%d %H:%M:%S} {label}"


def _local_text(instant: datetime | None, zone_name: str) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS±HH:MM`` (the contract's resolvedLocal form), or None."""
    if instant is None:
        return None
    try:
        local = instant.astimezone(get_zone(zone_name))
    except UserError:
        return None
    return fmt_local(local) + format_offset(local.utcoffset())


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Aligned columns, two spaces apart; the last column is not padded."""
    widths = [max([len(headers[i])] + [len(r[i]) for r in rows]) for i in range(len(headers) - 1)]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths, strict=True)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _finish(lines: list[str], unicode: bool) -> str:
    text = "\n".join(lines) + "\n"
    return text if unicode else text.translate(_ASCII)


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def safe_text(text: str) -> str:
    """Task output made harmless for a terminal (:func:`~core.render.terminal.terminal_safe`)."""
    return terminal_safe(text)


# --- schedules ------------------------------------------------------------------------


def _counts_text(s: ScheduleSummary) -> str:
    """``SUCCEEDED 12 · MISFIRE_EXPIRED 3 + a range``: states with occurrences, in lifecycle order."""
    shown = {state for state, n in s.counts.items() if n}
    if s.uncounted_ranges:
        shown.add(OccurrenceState.MISFIRE_EXPIRED)
    parts = [f"{state.value} {s.count_text(state)}" for state in OccurrenceState if state in shown]
    return " · ".join(parts) if parts else "none yet (the engine materializes them)"


def schedules_table(rows: Sequence[ScheduleSummary], *, unicode: bool = True) -> str:
    """One line per schedule: gate, active revision, zone, next due time and counts by state."""
    if not rows:
        return "No schedules in this ledger; publish one with schedctl apply SPEC.\n"
    cells = [
        (
            s.schedule_id,
            s.state.value,
            str(s.active_revision),
            s.time_zone,
            _local_cell(s.next_due_at, s.time_zone),
            _utc_cell(s.next_due_at),
            _counts_text(s),
        )
        for s in rows
    ]
    waits = [f"{s.schedule_id}: {s.waiting}" for s in rows if s.waiting]
    waits += [f"{s.schedule_id}: {s.held}" for s in rows if s.held]
    return _finish(_table(SCHEDULE_HEADERS, cells) + waits, unicode)


def schedule_json(s: ScheduleSummary) -> dict[str, Any]:
    """One schedule of ``schedctl schedules --format json``."""
    order = list(OccurrenceState)
    return {
        "scheduleId": s.schedule_id,
        "title": s.title,
        "state": s.state.value,
        "revision": s.active_revision,
        "timeZone": s.time_zone,
        "kind": s.kind,
        "nextDueLocal": _local_text(s.next_due_at, s.time_zone),
        "nextDueUtc": fmt_utc(s.next_due_at) if s.next_due_at is not None else None,
        "counts": {state.value: n for state, n in sorted(s.counts.items(), key=lambda kv: order.index(kv[0]))},
        "uncountedRanges": s.uncounted_ranges,
        "note": s.note,
        "waiting": s.waiting,
        "held": s.held,
        "tzdbVersion": s.tzdb_version,
        "engineVersion": s.engine_version,
    }


def schedules_json(rows: Sequence[ScheduleSummary]) -> str:
    """``{"schedules": [...]}``, indented, ending in a newline."""
    return _dump({"schedules": [schedule_json(s) for s in rows]})


# --- occurrences ----------------------------------------------------------------------


def _nominal_cell(row: OccurrenceView) -> str:
    text = row.nominal_local.replace("T", " ")
    return f"{text} ②" if row.fold_ordinal == 1 else text


def _why_cell(row: OccurrenceView) -> str:
    why = row.reason or ""
    if row.kind is not OccurrenceKind.SCHEDULED and row.kind.value not in why:
        why = f"{row.kind.value}: {why}" if why else row.kind.value
    return why


def occurrences_table(rows: Sequence[OccurrenceView], *, total: int | None = None, unicode: bool = True) -> str:
    """Occurrences in position order; ``②`` marks the second reading of a repeated
    wall time. ``total`` (when more matched than are shown) adds a closing line."""
    if not rows:
        return "No occurrences match.\n"
    cells = [
        (
            r.occurrence_id,
            r.schedule_id,
            str(r.revision),
            _nominal_cell(r),
            _utc_cell(r.resolved_utc),
            r.state.value,
            str(r.attempts),
            _why_cell(r),
        )
        for r in rows
    ]
    lines = _table(OCCURRENCE_HEADERS, cells)
    if total is not None and total > len(rows):
        lines.append(f"… the first {len(rows):,} of {total:,} in position order; raise --limit to see more")
    return _finish(lines, unicode)


def occurrences_json(rows: Sequence[OccurrenceView]) -> str:
    """``{"occurrences": [...]}`` (docs/contract.md §5), each row the contract's keys first."""
    return _dump({"occurrences": [r.to_json() for r in rows]})


# --- attempts -------------------------------------------------------------------------


def attempt_json(a: Attempt) -> dict[str, Any]:
    """One attempt of ``schedctl attempts --format json`` (invariant 4's fields)."""
    return {
        "attemptId": a.attempt_id,
        "attemptNumber": a.attempt_number,
        "claimGeneration": a.claim_generation,
        "workerHost": a.worker_host,
        "workerPid": a.worker_pid,
        "executionEpoch": a.execution_epoch,
        "startedUtc": fmt_utc(a.started_at),
        "finishedUtc": fmt_utc(a.finished_at) if a.finished_at is not None else None,
        "exitStatus": a.exit_status,
        "errorClass": a.error_class,
        "inputDigest": a.input_digest,
        "outcome": a.outcome.value if a.outcome is not None else None,
        "stdoutTail": a.stdout_tail,
        "stderrTail": a.stderr_tail,
    }


def attempts_json(occurrence: OccurrenceView, attempts: Sequence[Attempt]) -> str:
    """``{"occurrenceId": ..., "state": ..., "attempts": [...]}``, oldest attempt first."""
    return _dump(
        {
            "occurrenceId": occurrence.occurrence_id,
            "scheduleId": occurrence.schedule_id,
            "state": occurrence.state.value,
            "attempts": [attempt_json(a) for a in attempts],
        }
    )


def _tail_lines(label: str, tail: str | None) -> list[str]:
    if not tail:
        return []
    body = safe_text(tail.rstrip("\n")).split("\n")
    pad = " " * (4 + len(label) + 2)
    return [f"    {label}: {body[0]}", *(pad + line for line in body[1:])]


def attempts_table(occurrence: OccurrenceView, attempts: Sequence[Attempt], *, unicode: bool = True) -> str:
    """A heading for the occurrence, then one line per attempt with its output
    tails indented under it."""
    head = (
        f"{occurrence.occurrence_id} · {occurrence.schedule_id} revision {occurrence.revision} · "
        f"{occurrence.nominal_local} · {occurrence.state.value}"
    )
    if not attempts:
        return _finish([head, "No attempts yet."], unicode)
    cells = [
        (
            str(a.attempt_number),
            str(a.claim_generation),
            f"{a.worker_host}:{a.worker_pid}",
            str(a.execution_epoch),
            _utc_cell(a.started_at),
            _utc_cell(a.finished_at) if a.finished_at is not None else "running",
            str(a.exit_status) if a.exit_status is not None else _NONE,
            a.error_class or _NONE,
            a.input_digest[:DIGEST_CHARS] + "…",
            a.outcome.value if a.outcome is not None else _NONE,
        )
        for a in attempts
    ]
    header, *lines = _table(ATTEMPT_HEADERS, cells)
    out = [head, header]
    for a, line in zip(attempts, lines, strict=True):
        out.append(line)
        out.extend(_tail_lines("stdout", a.stdout_tail))
        out.extend(_tail_lines("stderr", a.stderr_tail))
    return _finish(out, unicode)
