"""Retry timing: exponential backoff, capped."""

from __future__ import annotations

import math
from datetime import timedelta

from core.spec.model import Retry


def backoff(retry: Retry, attempt_number: int) -> timedelta:
    """The wait after attempt ``attempt_number`` (1-based) before the next one, in whole seconds
    (rounded down, like every time of a schedule)."""
    if attempt_number < 1:
        raise ValueError("attempt numbers start at 1")
    seconds = retry.initial_backoff.total_seconds() * retry.multiplier ** (attempt_number - 1)
    # Capped as a number first: a hundredth retry growing a hundredfold is far past what a timedelta holds.
    return timedelta(seconds=math.floor(min(seconds, retry.max_backoff.total_seconds())))


def attempts_left(retry: Retry, attempts_made: int) -> bool:
    return attempts_made < retry.max_attempts
