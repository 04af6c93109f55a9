from __future__ import annotations

from datetime import timedelta

import pytest

from core.engine.backoff import attempts_left, backoff
from core.spec.model import Retry


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [
        pytest.param(1, timedelta(seconds=30), id="first_retry_waits_initial"),
        pytest.param(2, timedelta(seconds=60), id="doubles"),
        pytest.param(5, timedelta(seconds=480), id="fifth"),
        pytest.param(6, timedelta(minutes=10), id="capped_at_max"),
        pytest.param(40, timedelta(minutes=10), id="stays_capped"),
    ],
)
def test_default_backoff(attempt: int, expected: timedelta) -> None:
    assert backoff(Retry(), attempt) == expected


def test_attempts_left_counts_to_max() -> None:
    retry = Retry.model_validate({"maxAttempts": 2})
    assert [attempts_left(retry, n) for n in range(4)] == [True, True, False, False]


def test_attempt_numbers_start_at_one() -> None:
    with pytest.raises(ValueError, match="start at 1"):
        backoff(Retry(), 0)


@pytest.mark.parametrize(
    ("retry", "attempt", "expected"),
    [
        pytest.param({"maxAttempts": 100, "multiplier": 100.0}, 99, timedelta(minutes=10), id="huge_growth_is_capped"),
        pytest.param(
            {"initialBackoff": "PT3S", "multiplier": 1.5, "maxBackoff": "PT1H"}, 2, timedelta(seconds=4), id="whole"
        ),
    ],
)
def test_backoff_is_whole_seconds_and_never_overflows(
    retry: dict[str, object], attempt: int, expected: timedelta
) -> None:
    assert backoff(Retry.model_validate(retry), attempt) == expected
