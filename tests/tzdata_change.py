"""A government changes its rules: a modified America/New_York, and a way to make it "installed".

:func:`spring_a_week_later` takes the installed tzdata's compiled New York zone
(a slim TZif file: its last transition is in 2007 and the POSIX TZ footer gives
every later year) and moves the start of daylight saving time from the second
to the third Sunday of March. In 2026 New York then springs forward on March 15
instead of March 8: 02:30 on March 9-14 is EST (07:30Z), not EDT (06:30Z).

:func:`install` makes it what the installed tzdata says (with its own version)
for the rest of a test, through ``core.zones.zone_tzif`` and ``tzdata.IANA_VERSION``,
and clears every cache that holds a zone built from the old data.
"""

from __future__ import annotations

import pytest
import tzdata

import core.zones
from core.ledger.compiled import compiled_revision

ZONE = "America/New_York"
_FOOTER = b"\nEST5EDT,M3.2.0,M11.1.0\n"
_MOVED = b"\nEST5EDT,M3.3.0,M11.1.0\n"


def spring_a_week_later() -> bytes:
    """New York's TZif bytes with daylight saving time starting a week later (third Sunday of March)."""
    real = core.zones.zone_tzif(ZONE)
    assert real.endswith(_FOOTER), "the installed New York zone has another footer than the test expects"
    return real[: -len(_FOOTER)] + _MOVED


def clear_zone_caches() -> None:
    """Forget every zone, zone index, compiled revision and kept expansion built so far."""
    import importlib

    core.zones.get_zone.cache_clear()
    core.zones.zone_index.cache_clear()
    compiled_revision.cache_clear()
    materialize = importlib.import_module("core.ledger.materialize")
    with materialize._RESUME_LOCK:
        materialize._RESUME.clear()


def install(monkeypatch: pytest.MonkeyPatch, tzif: bytes, version: str) -> None:
    """From now on in this test, the installed tzdata is ``version`` and its New York zone is ``tzif``."""
    real = core.zones.zone_tzif
    monkeypatch.setattr(core.zones, "zone_tzif", lambda name: tzif if name == ZONE else real(name))
    monkeypatch.setattr(tzdata, "IANA_VERSION", version)
    clear_zone_caches()
