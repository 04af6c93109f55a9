"""A government changes its rules: a modified America/New_York, and a way to make it "installed".

:func:`spring_a_week_later` takes the installed tzdata's compiled New York zone
(a slim TZif file: its last transition is in 2007 and the POSIX TZ footer gives
every later year) and moves the start of daylight saving time from the second
to the third Sunday of March. In 2026 New York then springs forward on March 15
instead of March 8: 02:30 on March 9-14 is EST (07:30Z), not EDT (06:30Z).

:func:`install` makes it what the installed tzdata says (with its own version)
for the rest of a test, through ``core.time.zones.zone_tzif`` and ``tzdata.IANA_VERSION``,
and clears every cache that holds a zone built from the old data.

:func:`install_tzdata` does the same for zones given as TZif bytes under a new release
name (:data:`NEW_RELEASE`), as the drift and shadow tests install a new release; a zone
built from a POSIX TZ string (:func:`posix_tzif`) is the rule a government would
announce (:data:`NEW_YORK_A_WEEK_LATE`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

import pytest
import tzdata

import core.time.zones
from core.ledger.compiled import forget_compiled

ZONE = "America/New_York"
_FOOTER = b"\nEST5EDT,M3.2.0,M11.1.0\n"
_MOVED = b"\nEST5EDT,M3.3.0,M11.1.0\n"


def spring_a_week_later() -> bytes:
    """New York's TZif bytes with daylight saving time starting a week later (third Sunday of March)."""
    real = core.time.zones.zone_tzif(ZONE)
    assert real.endswith(_FOOTER), "the installed New York zone has another footer than the test expects"
    return real[: -len(_FOOTER)] + _MOVED


def clear_zone_caches() -> None:
    """Forget every zone, zone index, compiled revision and kept expansion built so far."""
    import importlib

    core.time.zones.get_zone.cache_clear()
    core.time.zones.zone_index.cache_clear()
    forget_compiled()
    materialize = importlib.import_module("core.ledger.materialize")
    with materialize._RESUME_LOCK:
        materialize._RESUME.clear()


def install(monkeypatch: pytest.MonkeyPatch, tzif: bytes, version: str) -> None:
    """From now on in this test, the installed tzdata is ``version`` and its New York zone is ``tzif``."""
    real = core.time.zones.zone_tzif
    monkeypatch.setattr(core.time.zones, "zone_tzif", lambda name: tzif if name == ZONE else real(name))
    monkeypatch.setattr(tzdata, "IANA_VERSION", version)
    clear_zone_caches()


#: A release later than any the tzdata package has shipped.
NEW_RELEASE = "2099a"
#: New York under a rule that springs forward on the third Sunday of March (a week late).
NEW_YORK_A_WEEK_LATE = "EST5EDT,M3.3.0,M11.1.0"


def posix_tzif(rule: str, std_offset_seconds: int, std_abbr: str) -> bytes:
    """TZif data without transitions that follows ``rule`` (a POSIX TZ string) at every instant."""
    abbr = std_abbr.encode() + b"\0"
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, len(abbr))
    block = header + struct.pack(">lbB", std_offset_seconds, 0, 0) + abbr
    return block + block + b"\n" + rule.encode() + b"\n"


def new_york_a_week_late() -> bytes:
    return posix_tzif(NEW_YORK_A_WEEK_LATE, -5 * 3600, "EST")


def install_tzdata(
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    zones: Mapping[str, bytes],
    release: str = NEW_RELEASE,
) -> None:
    """From now until the test ends, ``zones`` (TZif bytes by name) replace the tzdata package's
    and its release is ``release``."""
    real = core.time.zones.zone_tzif
    monkeypatch.setattr(core.time.zones, "zone_tzif", lambda name: zones[name] if name in zones else real(name))
    monkeypatch.setattr(tzdata, "IANA_VERSION", release)
    clear_zone_caches()
    request.addfinalizer(clear_zone_caches)  # nothing loads a zone between this and monkeypatch's undo
