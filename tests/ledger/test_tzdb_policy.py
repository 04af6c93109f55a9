"""Pin or follow the tz database (``tzdbPolicy``): a PIN revision resolves with the zone it
was published with, on every host, whatever tzdata is installed; a FOLLOW one follows
the installed tzdata for what is not materialized yet; materialized occurrences never move."""

from __future__ import annotations

from datetime import timedelta

from core.clock import FixedClock
from core.ledger.db import Ledger
from core.ledger.future_diff import future_diff
from core.ledger.materialize import materialize_all
from core.ledger.publish import publish
from core.zones import tzdb_version

from . import spec

SID = "daily-ops-summary"
FOLLOWS = "follows the installed tz database"


def _publish(ledger: Ledger, clock: FixedClock, **overrides: object) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock)
        materialize_all(session, clock)


def test_the_diff_of_the_future_says_when_the_policy_changes(ledger: Ledger, clock: FixedClock) -> None:
    pinned = f"pinned to tz database {tzdb_version()}"
    with ledger.read() as session:
        assert future_diff(session, spec(), clock.now(), timedelta(days=2)).tzdb_policy is None
        assert future_diff(session, spec(tzdbPolicy="PIN"), clock.now()).tzdb_policy == (None, pinned)
    _publish(ledger, clock)
    with ledger.read() as session:
        assert future_diff(session, spec(revision=2), clock.now()).tzdb_policy is None
        found = future_diff(session, spec(revision=2, tzdbPolicy="PIN"), clock.now())
    assert found.tzdb_policy == (FOLLOWS, pinned)
    assert found.changes == 0  # the same tzdata: no run moves
    _publish(ledger, clock, revision=2, tzdbPolicy="PIN")
    with ledger.read() as session:
        assert future_diff(session, spec(revision=3, tzdbPolicy="PIN"), clock.now()).tzdb_policy is None
        assert future_diff(session, spec(revision=3), clock.now()).tzdb_policy == (pinned, FOLLOWS)
