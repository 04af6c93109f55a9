"""What an attempt's end means for its occurrence (docs/contract.md §4, invariant 5).

Exit 0 succeeds. A clean non-zero exit (or a program that never started)
retries with backoff until attempts are used up. A lost outcome (timeout,
signal, engine crash, expired lease) retries only when the task's effect is
``none`` or ``idempotent``; a non-idempotent task asks its ``verify`` probe, and
without a clear answer waits in UNKNOWN_EFFECT for a person. Nothing is ever
re-sent blindly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from core.engine.backoff import backoff
from core.enums import Effect
from core.ledger.states import OccurrenceState
from core.spec.model import Retry


class Verdict(StrEnum):
    """A verify probe's answer: exit 0, exit 1, anything else."""

    HAPPENED = "happened"
    NOT_HAPPENED = "not_happened"
    UNKNOWN = "unknown"


def verdict_from_exit(exit_status: int | None) -> Verdict:
    if exit_status == 0:
        return Verdict.HAPPENED
    if exit_status == 1:
        return Verdict.NOT_HAPPENED
    return Verdict.UNKNOWN


@dataclass(frozen=True)
class Outcome:
    state: OccurrenceState
    reason: str
    retry_after: timedelta | None = None  # with RETRY_WAIT


def _retry_or_fail(retry: Retry, attempt_number: int, why: str) -> Outcome:
    if attempt_number < retry.max_attempts:
        wait = backoff(retry, attempt_number)
        return Outcome(OccurrenceState.RETRY_WAIT, f"{why}; attempt {attempt_number + 1} follows", wait)
    used = "its only attempt used" if retry.max_attempts == 1 else f"all {retry.max_attempts:,} attempts used"
    return Outcome(OccurrenceState.FAILED, f"{why}; {used}")


def decide(
    *,
    exit_status: int | None,
    error_class: str | None,
    effect: Effect,
    retry: Retry,
    attempt_number: int,
    probe: Callable[[], Verdict] | None = None,
) -> Outcome:
    """The next state after attempt ``attempt_number`` ended as described.

    ``error_class`` is None for a process that exited by itself, ``spawn_error``
    when it never started, and anything else (``timeout``, ``signal``, ``lost``)
    when the outcome is lost. ``probe`` runs the task's verify command.
    """
    if error_class is None and exit_status == 0:
        return Outcome(OccurrenceState.SUCCEEDED, "exited with status 0")
    if error_class is None:
        return _retry_or_fail(retry, attempt_number, f"exited with status {exit_status}")
    if error_class == "spawn_error":
        return _retry_or_fail(retry, attempt_number, "the program could not be started")
    lost = {"timeout": "timed out and was killed", "signal": "was killed by a signal"}.get(
        error_class, "lost its outcome (the engine stopped or its lease expired)"
    )
    if effect is not Effect.NON_IDEMPOTENT:
        return _retry_or_fail(retry, attempt_number, f"the attempt {lost}; effect {effect.value} is safe to repeat")
    if probe is None:
        return Outcome(
            OccurrenceState.UNKNOWN_EFFECT,
            f"the attempt {lost}; the task is non_idempotent and has no verify probe: a person must decide",
        )
    answer = probe()
    if answer is Verdict.HAPPENED:
        return Outcome(OccurrenceState.SUCCEEDED, f"the attempt {lost}; the verify probe says it happened")
    if answer is Verdict.NOT_HAPPENED:
        return _retry_or_fail(retry, attempt_number, f"the attempt {lost}; the verify probe says it did not happen")
    return Outcome(
        OccurrenceState.UNKNOWN_EFFECT, f"the attempt {lost}; the verify probe could not tell: a person must decide"
    )
