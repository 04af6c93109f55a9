"""A failed run's reason counts its attempts in words that agree with the number."""

from __future__ import annotations

import pytest

from core.engine.outcomes import decide
from core.enums import Effect
from core.ledger.states import OccurrenceState
from core.spec.model import Retry

USED = {1: "its only attempt used", 2: "all 2 attempts used", 100: "all 100 attempts used"}


@pytest.mark.parametrize("max_attempts", sorted(USED), ids=["one_attempt", "two_attempts", "the_most"])
def test_the_last_failed_attempt_says_how_many_were_used(max_attempts: int) -> None:
    outcome = decide(
        exit_status=3,
        error_class=None,
        effect=Effect.IDEMPOTENT,
        retry=Retry.model_validate({"maxAttempts": max_attempts}),
        attempt_number=max_attempts,
    )
    assert (outcome.state, outcome.reason) == (OccurrenceState.FAILED, f"exited with status 3; {USED[max_attempts]}")
