"""A zone built from a revision's pinned TZif bytes resolves by those rules, whatever tzdata is installed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from core.errors import ZoneError
from core.explain.whatif import what_if
from core.ledger.compiled import compiled_revision
from core.recurrence.expand import expand
from core.spec.canonical import canonical_dict
from core.spec.validation import parse_spec
from core.time.zones import pinned_zone, zone_tzif
from tests.tzdata_change import ZONE, clear_zone_caches, install, spring_a_week_later

DAILY = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "daily",
    "revision": 1,
    "timeZone": ZONE,
    "tzdbPolicy": "PIN",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
}
TEXT = json.dumps(canonical_dict(parse_spec(DAILY)))
MARCH_9 = (datetime(2026, 3, 9, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC))


@pytest.fixture
def installed_later(monkeypatch: pytest.MonkeyPatch) -> Iterator[bytes]:
    """The installed tzdata now has New York spring forward a week later; yields the bytes it had before."""
    before = zone_tzif(ZONE)
    install(monkeypatch, spring_a_week_later(), "2099a")
    yield before
    monkeypatch.undo()
    clear_zone_caches()


def _march_9(tzif: bytes | None) -> list[datetime | None]:
    return [row.resolved for row in expand(compiled_revision(TEXT, tzif), *MARCH_9)]


def test_the_pinned_rules_win_over_the_installed_ones(installed_later: bytes) -> None:
    assert _march_9(None) == [datetime(2026, 3, 9, 7, 30, tzinfo=UTC)]  # installed: still EST
    assert _march_9(installed_later) == [datetime(2026, 3, 9, 6, 30, tzinfo=UTC)]  # pinned: EDT since the 8th


def test_what_if_of_a_published_revision_uses_its_pinned_rules(installed_later: bytes) -> None:
    compiled = compiled_revision(TEXT, installed_later)
    rows = what_if(compiled.spec, *MARCH_9, compiled=compiled)
    assert [row.due for row in rows] == [datetime(2026, 3, 9, 6, 30, tzinfo=UTC)]


def test_zones_are_cached_by_the_bytes_digest() -> None:
    real = zone_tzif(ZONE)
    assert pinned_zone(ZONE, real) is pinned_zone(ZONE, bytes(real))
    assert pinned_zone(ZONE, spring_a_week_later()) is not pinned_zone(ZONE, real)


def test_bytes_that_are_not_a_tzif_file_are_refused() -> None:
    with pytest.raises(ZoneError, match="the pinned rules of America/New_York cannot be read"):
        pinned_zone(ZONE, b"not a zone")
