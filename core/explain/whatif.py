"""What-if: "the machine was off from A to B; what happens when it comes back?"

The designer's what-if view asks :func:`what_if`. It expands the occurrences
that came due during the outage and hands them to the engine's own misfire
decision, :func:`core.engine.misfire.plan_recovery`, with ``now`` = the moment
the machine returns, so the view can never disagree with what the engine does.
Nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.engine.misfire import Action, Due, plan_recovery
from core.errors import ComputeLimitError, UserError
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import iter_rows
from core.recurrence.occurrence import Occurrence
from core.spec.model import ScheduleSpec
from core.time.formats import fmt_utc

#: Occurrences an outage may hold before the question is refused as too big.
MAX_WHATIF_ROWS = 10_000

__all__ = ["MAX_WHATIF_ROWS", "Action", "WhatIfRow", "what_if"]


@dataclass(frozen=True)
class WhatIfRow:
    """One occurrence that came due while the machine was off, and its fate on return."""

    occurrence: Occurrence
    due: datetime
    """When it was due (its dispatch time: resolved instant plus jitter), aware UTC."""
    action: Action
    """RUN (not late yet), CATCH_UP (made up late) or EXPIRE (MISFIRE_EXPIRED)."""
    reason: str | None


def what_if(
    spec: ScheduleSpec,
    off_from: datetime,
    off_to: datetime,
    *,
    max_rows: int = MAX_WHATIF_ROWS,
    compiled: CompiledSchedule | None = None,
) -> list[WhatIfRow]:
    """The runnable occurrences due in ``[off_from, off_to]`` and what the misfire policy does to each.

    ``off_from`` and ``off_to`` are aware instants; ``off_to`` is the moment the
    machine (and its engine) comes back. Rows are oldest first. Raises
    :class:`UserError` for a range that ends before it starts and
    :class:`ComputeLimitError` when the outage holds more than ``max_rows``
    occurrences. ``compiled`` is ``spec`` compiled already: a published revision's
    (``core.ledger.compiled.compiled_revision``), in its pinned zone under ``tzdbPolicy: PIN``.
    """
    if off_from.tzinfo is None or off_to.tzinfo is None:
        raise UserError("the outage needs aware instants (with a time zone)")
    if off_to <= off_from:
        raise UserError(
            f"the machine comes back ({fmt_utc(off_to)}) before it goes off ({fmt_utc(off_from)}); "
            "choose an end after the start"
        )
    compiled = compiled or compile_schedule(spec)
    # Jitter delays dispatch past the position, so a row positioned up to one
    # jitter before the outage can still come due inside it.
    scan_from = off_from - spec.jitter
    due_rows: list[tuple[Occurrence, datetime]] = []
    seen = 0
    for row in iter_rows(compiled, scan_from):
        if row.position > off_to:
            break
        # Skipped rows cost work too: every row in the range counts towards the cap.
        seen += 1
        if seen > max_rows:
            raise ComputeLimitError(
                f"the outage from {fmt_utc(off_from)} to {fmt_utc(off_to)} holds more than "
                f"{max_rows:,} occurrences of {spec.schedule_id}; choose a shorter outage"
            )
        dispatch = row.dispatch
        if row.runnable and dispatch is not None and off_from <= dispatch <= off_to:
            due_rows.append((row, dispatch))
    decisions = plan_recovery(
        [Due(row.occurrence_id, due) for row, due in due_rows],
        off_to,
        spec.misfire_policy,
        max_catch_up=spec.effective_max_catch_up,
        lateness_window=spec.lateness_window,
        catch_up_window=spec.catch_up_window,
    )
    by_id = {row.occurrence_id: row for row, _ in due_rows}
    return [WhatIfRow(by_id[d.occurrence_id], d.due, d.action, d.reason) for d in decisions]
