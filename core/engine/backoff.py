"""Retry timing: exponential backoff, capped."""

from __future__ import annotations

from datetime import timedelta

from core.spec import Retry


def backoff(retry: Retry, attempt_number: int) -> timedelta:
    """The wait after attempt ``attempt_number`` (1-based) before the next one."""
    if attempt_number < 1:
        raise ValueError("attempt numbers start at 1")
    seconds = retry.initial_backoff.total_seconds() * retry.multiplier ** (attempt_number - 1)
    return min(timedelta(seconds=seconds), retry.max_backoff)


def attempts_left(retry: Retry, attempts_made: int) -> bool:
    return attempts_made < retry.max_attempts
