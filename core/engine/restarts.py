"""A worker an exception killed: restarted at most :data:`WORKER_RESTARTS` times a pass, each
death told in the log and recorded as an event (docs/contract.md §4: nothing the engine does is
silent). The loop that restarts it is :meth:`core.engine.workers.Workers.work_schedule`."""

from __future__ import annotations

import logging

from core.engine.context import Claim, Context
from core.engine.runner import describe_error
from core.ledger import events
from core.ledger.db import Ledger

__all__ = ["WORKER_RESTARTS", "worker_died"]

#: Times a worker killed by an exception is restarted within one pass; after that the
#: next pass starts a new one.
WORKER_RESTARTS = 3

_log = logging.getLogger("core.engine.workers")  # the worker loops' logger, as before this module


def worker_died(
    ledger: Ledger, context: Context, schedule_id: str, held: Claim | None, exc: Exception, restarted: bool
) -> None:
    """A log line and an event about the worker for ``schedule_id`` that ``exc`` killed, with the
    claim it had in hand (``held``). When it is not restarted, that claim is left to recovery (its
    lease is no longer kept)."""
    why = describe_error(exc)
    then = "restarted" if restarted else f"not restarted after {WORKER_RESTARTS} restarts (the next pass starts one)"
    _log.error("the engine's worker for schedule %s died: %s; %s", schedule_id, why, then)
    _log.debug("how the worker for schedule %s died", schedule_id, exc_info=exc)
    if not restarted and held is not None:
        context.release(held.occurrence_id)
    try:
        with ledger.write() as session:
            events.append(
                session,
                events.EngineWorkerDied(
                    at=context.clock.now(),
                    schedule_id=schedule_id,
                    occurrence_id=held.occurrence_id if held is not None else None,
                    worker=context.worker,
                    error=why,
                    restarted=restarted,
                    attempt=held.attempt_number if held is not None else None,
                ),
            )
    except Exception as again:
        _log.error("could not record the death of the worker for schedule %s: %s", schedule_id, describe_error(again))
