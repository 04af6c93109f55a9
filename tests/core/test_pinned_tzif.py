"""Damaged pinned TZif bytes (a publisher can write any bytes into the ledger) give one
ZoneError line, in bounded time: never a loop, a ``struct.error`` or a memory blow-up."""

from __future__ import annotations

import struct
import sys
import threading
from collections.abc import Callable
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import PublishError, ZoneError
from core.ledger.publish import _pinned_rules
from core.spec.validation import parse_spec
from core.time.tzif_check import MAX_TZIF_BYTES, check_tz_string, check_tzif
from core.time.zones import available_zones, pinned_zone, tzdb_version, zone_tzif

ZONE = "Europe/Paris"
REAL = zone_tzif(ZONE)
#: Where the second (64-bit) header starts in REAL.
SECOND = 44 + sum(
    n * size
    for n, size in zip(struct.unpack_from(">6L", REAL, 20), (1, 1, 8, 5, 6, 1), strict=True)  # v1 block sizes
)


def _counts(at: int, **values: int) -> bytes:
    """REAL with the header at ``at`` given other counts."""
    names = ("isut", "isstd", "leap", "time", "types", "chars")
    counts = list(struct.unpack_from(">6L", REAL, at + 20))
    for key, value in values.items():
        counts[names.index(key)] = value
    return REAL[: at + 20] + struct.pack(">6L", *counts) + REAL[at + 44 :]


def _footer(text: bytes) -> bytes:
    return REAL[: REAL.rindex(b"\n", 0, len(REAL) - 1) + 1] + text + b"\n"


def _first_index_out_of_range() -> bytes:
    time = struct.unpack_from(">L", REAL, SECOND + 32)[0]
    at = SECOND + 44 + 8 * time  # the first transition's type index
    return REAL[:at] + b"\xff" + REAL[at + 1 :]


#: Damaged bytes, and a word of the line that refuses them.
DAMAGED = [
    pytest.param(REAL[:-1], "footer", id="missing_final_newline"),
    pytest.param(b"", "not a TZif file", id="empty"),
    pytest.param(REAL[:3], "not a TZif file", id="truncated_in_magic"),
    pytest.param(REAL[:30], "header", id="truncated_in_first_header"),
    pytest.param(REAL[:44], "header", id="truncated_after_first_header"),
    pytest.param(REAL[: SECOND + 20], "header", id="truncated_in_second_header"),
    pytest.param(REAL[: SECOND + 300], "ends inside its data", id="truncated_in_data"),
    pytest.param(REAL[:-12], "footer", id="truncated_in_footer"),
    pytest.param(_counts(0, time=0xFFFF_FFFF), "header", id="huge_first_timecnt"),
    pytest.param(_counts(SECOND, time=0x7FFF_FFFF), "ends inside its data", id="huge_second_timecnt"),
    pytest.param(_counts(SECOND, leap=0xFFFF_FFFF), "ends inside its data", id="huge_leapcnt"),
    pytest.param(_counts(SECOND, types=0), "counts", id="no_local_time_type"),
    pytest.param(_first_index_out_of_range(), "local time type", id="type_index_out_of_range"),
    pytest.param(REAL * (MAX_TZIF_BYTES // len(REAL) + 1), "bytes, more than", id="oversized"),
    pytest.param(REAL + b"x", "footer", id="trailing_byte"),
    pytest.param(REAL[:4] + b"\0" + REAL[5:], "version 2", id="version_1"),
    pytest.param(_footer(b"\xff\xfegarbage"), "ASCII", id="garbage_footer"),
    pytest.param(_footer(b"CET-1CEST,M13.5.0,M10.5.0/3"), "names no day", id="footer_month_13"),
    pytest.param(_footer(b"<+24>-24"), "a day or more", id="footer_offset_24h"),
    pytest.param(_footer(b"A" * 5000), "POSIX TZ string", id="footer_5000_chars"),
    pytest.param(_footer(b"CET-1CEST"), "POSIX TZ string", id="footer_dst_without_rule"),
]


def _within(call: Callable[[], object], seconds: float = 30.0) -> BaseException | None:
    """Run ``call`` on a daemon thread; its exception, or a failure when it is still running after
    ``seconds`` (a guard against a hang, not a wait: a bounded check returns in milliseconds)."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test
            raised.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "reading the pinned rules did not end"
    return raised[0] if raised else None


@pytest.mark.parametrize(("blob", "word"), DAMAGED)
def test_damaged_pinned_rules_are_one_line_in_bounded_time(blob: bytes, word: str) -> None:
    raised = _within(lambda: pinned_zone(ZONE, blob))
    assert isinstance(raised, ZoneError)
    line = str(raised)
    assert line.startswith(f"the pinned rules of {ZONE} cannot be read: ")
    assert word in line
    assert "\n" not in line


def test_every_zone_tzdata_ships_passes_the_check() -> None:
    root = resources.files("tzdata").joinpath("zoneinfo")
    for name in available_zones():
        data = root.joinpath(name).read_bytes()
        assert len(data) < MAX_TZIF_BYTES // 16, name
        check_tzif(data)


@pytest.mark.parametrize(
    "text",
    ["", "EST5", "<+0330>-3:30", "CET-1CEST,M3.5.0,M10.5.0/3", "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "XXX3YYY,J60/2,300"],
)
def test_real_tz_strings_are_read(text: str) -> None:
    check_tz_string(text)


@settings(max_examples=300, deadline=None)
@given(cut=st.integers(0, len(REAL)), at=st.integers(0, len(REAL) - 1), byte=st.integers(0, 255))
def test_any_cut_or_changed_byte_gives_a_zone_or_one_zone_error(cut: int, at: int, byte: int) -> None:
    """A property over every truncation and every one-byte change: never another exception."""
    changed = REAL[:at] + bytes([byte]) + REAL[at + 1 :]
    for blob in (REAL[:cut], changed):
        raised = _within(lambda blob=blob: pinned_zone(ZONE, blob))  # type: ignore[misc]
        assert raised is None or isinstance(raised, ZoneError), repr(raised)


def test_publish_refuses_installed_rules_that_fail_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes a PIN revision stores pass the check every reader makes, or nothing is published."""
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "pinned",
            "revision": 1,
            "timeZone": ZONE,
            "tzdbPolicy": "PIN",
            "rule": "FREQ=DAILY",
            "start": "2026-01-01T00:00:00",
            "gapPolicy": "SKIP",
            "foldPolicy": "FIRST_ONLY",
        }
    )
    publishing = sys.modules[_pinned_rules.__module__]
    monkeypatch.setattr(publishing, "zone_tzif", lambda name: REAL[:-1])
    with pytest.raises(PublishError, match=r"^pinned revision 1: tzdbPolicy: PIN cannot keep .*footer"):
        _pinned_rules(spec, tzdb_version(), "pinned revision 1")
