"""Which live engines would run a spec published now (core.team.runs_on_match), over the
engines a ledger has seen (monitor_reads.engines_seen), on SQLite and PostgreSQL: the
line under the designer's "Runs on"."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from core.clock import FixedClock
from core.engine.presence import STALE_AFTER, announce
from core.ledger.db import Ledger
from core.ledger.monitor_reads import engines_seen
from core.ledger.states import EngineKind
from core.team.actor import Actor, os_user
from core.team.placement import Placement
from core.team.runs_on_match import engine_match

ME = os_user()
ON_ALPHA = Actor(ME, "alpha")
DISTRUST = f"(schedctl engine run --trust {ME})"


@pytest.fixture
def engines(ledger: Ledger, clock: FixedClock) -> Ledger:
    """Mine on alpha; ci's on build-1 with gpu=yes, trusting anyone; bob's on beta with gpu=yes."""
    announce(ledger, clock, EngineKind.APP, placement=Placement.of(ON_ALPHA))
    announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(Actor("ci", "build-1"), {"gpu": "yes"}, ("*",)))
    announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(Actor("bob", "beta"), {"gpu": "yes"}))
    return ledger


@pytest.mark.parametrize(
    ("runs_on", "later", "text"),
    [
        pytest.param(None, 0, f"Matches 1 live engine: alpha ({ME})", id="this_machine"),
        pytest.param({"any": True}, 0, f"Matches 2 live engines: alpha ({ME}), build-1 (ci); not counted: beta (bob), "
                     f"which does not trust {ME} {DISTRUST}", id="any_engine"),
        pytest.param({"host": "beta"}, 0, "No live engine matches: the runs will wait — beta (bob) has the labels "
                     f"but does not trust {ME} {DISTRUST}", id="only_an_untrusting_engine"),
        pytest.param({"site": "lab"}, 0, "No live engine matches: the runs will wait — no engine with site=lab was "
                     "ever seen on this ledger", id="never_seen"),
        pytest.param(None, 3, "No live engine matches: the runs will wait — last seen engine with host=alpha 3 h ago",
                     id="gone_quiet"),
    ],
)  # fmt: skip
def test_the_engines_a_ledger_has_seen(engines: Ledger, clock: FixedClock, runs_on: Any, later: int, text: str) -> None:
    clock.set(clock.now() + timedelta(hours=later))
    now = clock.now()
    assert engine_match(runs_on, ON_ALPHA, engines_seen(engines, now, STALE_AFTER)).text(now) == text
