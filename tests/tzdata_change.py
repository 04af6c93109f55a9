"""A new tz database release, as a test installs it: zones with other rules under a
new release name, for everything that loads a zone or names the release (the
compiler, the materializer, drift, shadow, publish) until the test ends.

A changed zone is TZif data built from a POSIX TZ string, the rule a government
would announce (:data:`NEW_YORK_A_WEEK_LATE`: New York springs forward a week
later than the real rule's second Sunday of March).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Mapping
from typing import IO
from zoneinfo import ZoneInfo

import pytest
import tzdata

import core.zones
from core.ledger.compiled import compiled_revision
from core.ledger.materialize import forget_expansions
from core.zones import get_zone, zone_index

#: A release later than any the tzdata package has shipped.
NEW_RELEASE = "2099a"
#: New York under a rule that springs forward on the third Sunday of March (a week late).
NEW_YORK_A_WEEK_LATE = "EST5EDT,M3.3.0,M11.1.0"


def posix_zone(key: str, rule: str, std_offset_seconds: int, std_abbr: str) -> ZoneInfo:
    """A zone that follows ``rule`` (a POSIX TZ string) at every instant: TZif data
    without transitions, whose footer holds the rule."""
    abbr = std_abbr.encode() + b"\0"
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, len(abbr))
    block = header + struct.pack(">lbB", std_offset_seconds, 0, 0) + abbr
    return ZoneInfo.from_file(io.BytesIO(block + block + b"\n" + rule.encode() + b"\n"), key=key)


def new_york_a_week_late() -> ZoneInfo:
    return posix_zone("America/New_York", NEW_YORK_A_WEEK_LATE, -5 * 3600, "EST")


def _forget() -> None:
    get_zone.cache_clear()
    zone_index.cache_clear()
    compiled_revision.cache_clear()
    forget_expansions()


def install_tzdata(
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    zones: Mapping[str, ZoneInfo],
    release: str = NEW_RELEASE,
) -> None:
    """From now until the test ends, ``zones`` replace the tzdata package's and its release is ``release``."""

    class _Loader:
        @staticmethod
        def from_file(fh: IO[bytes], key: str | None = None) -> ZoneInfo:
            return zones[key] if key in zones else ZoneInfo.from_file(fh, key=key)

    monkeypatch.setattr(core.zones, "ZoneInfo", _Loader)
    monkeypatch.setattr(tzdata, "IANA_VERSION", release)
    _forget()
    request.addfinalizer(_forget)  # nothing loads a zone between this and monkeypatch's undo
