"""Checking a zone's TZif bytes (RFC 8536) before :mod:`zoneinfo` reads them.

A revision under ``tzdbPolicy: PIN`` stores its zone's TZif bytes in the ledger,
where anyone holding the publisher role can write any bytes. The standard
library's reader trusts its input: a footer without its final newline makes it
loop forever, a short file ends in ``struct.error``, a header counting four
billion transitions asks for gigabytes. :func:`check_tzif` reads the structure
with bounds first: the size, every count against the length, each block in
place, the version 2+ footer newline-terminated at the very end and its POSIX TZ
string by a strict grammar. Every step is bounded by the length of the bytes,
which is bounded by :data:`MAX_TZIF_BYTES`. Only bytes that pass are handed to
zoneinfo (:func:`core.time.zones.pinned_zone`).
"""

from __future__ import annotations

import itertools
import re
import struct

from core.errors import ZoneError

#: The largest TZif file accepted. Every zone the tz database ships compiles to
#: under 4 KiB (Asia/Hebron, the largest, is about 3 KiB; under 10 KiB built "fat").
MAX_TZIF_BYTES = 64 * 1024
#: The longest POSIX TZ string accepted in the footer (the tz database's longest is 44 characters).
MAX_FOOTER_CHARS = 128
#: An offset or a time of day in the footer stays under a day (RFC 8536 allows rule times to ±167 h).
_DAY = 86_400

_HEADER = struct.Struct(">4sc15x6L")
_NAME = r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)"
_OFFSET = r"[+-]?\d{1,2}(?::\d{2}(?::\d{2})?)?"
_DATE = r"(?:J\d{1,3}|\d{1,3}|M\d{1,2}\.\d\.\d)"
_TIME = r"[+-]?\d{1,3}(?::\d{2}(?::\d{2})?)?"
_TZ_STRING = re.compile(
    rf"(?P<std>{_NAME})(?P<stdoff>{_OFFSET})"
    rf"(?:(?P<dst>{_NAME})(?P<dstoff>{_OFFSET})?"
    rf",(?P<start>{_DATE})(?:/(?P<starttime>{_TIME}))?,(?P<end>{_DATE})(?:/(?P<endtime>{_TIME}))?)?",
    re.ASCII,
)


def _seconds(text: str) -> int:
    """``-5:30`` -> -19800 (hours, then optional minutes and seconds under 60)."""
    sign = -1 if text.startswith("-") else 1
    parts = [int(p) for p in text.lstrip("+-").split(":")]
    if any(p > 59 for p in parts[1:]):
        raise ZoneError(f"{text} has minutes or seconds past 59")
    hours, minutes, seconds = (*parts, 0, 0)[:3]
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _check_date(text: str) -> None:
    if text.startswith("M"):
        month, week, day = (int(p) for p in text[1:].split("."))
        if not (1 <= month <= 12 and 1 <= week <= 5 and day <= 6):
            raise ZoneError(f"the rule date {text} names no day")
    elif not (1 if text.startswith("J") else 0) <= int(text.lstrip("J")) <= 365:
        raise ZoneError(f"the rule date {text} is past day 365")


def check_tz_string(text: str) -> None:
    """Raise :class:`ZoneError` unless ``text`` is a POSIX TZ string this Tidemark reads
    (empty, ``EST5``, ``CET-1CEST,M3.5.0,M10.5.0/3``, ``<+0330>-3:30``)."""
    if text == "":
        return
    match = _TZ_STRING.fullmatch(text) if len(text) <= MAX_FOOTER_CHARS else None
    if match is None:
        raise ZoneError("its footer is not a POSIX TZ string")
    std = -_seconds(match["stdoff"])
    dst = -_seconds(match["dstoff"]) if match["dstoff"] else std + 3600
    times = [_seconds(t) for t in (match["starttime"], match["endtime"]) if t]
    if abs(std) >= _DAY or (match["dst"] and abs(dst) >= _DAY) or any(abs(t) >= 7 * _DAY for t in times):
        raise ZoneError("its footer has an offset of a day or more")
    for date in (match["start"], match["end"]):
        if date:
            _check_date(date)


Counts = tuple[int, int, int, int, int, int]
"""A header's isutcnt, isstdcnt, leapcnt, timecnt, typecnt and charcnt."""


def _counts(data: bytes, at: int) -> tuple[bytes, Counts]:
    """The header at ``at``: its version byte and its counts."""
    if len(data) - at < _HEADER.size:
        raise ZoneError(f"it ends inside a header (at byte {at})")
    magic, version, *counts = _HEADER.unpack_from(data, at)
    if magic != b"TZif":
        raise ZoneError(f"there is no TZif header at byte {at}")
    isut, isstd, leap, time, types, chars = counts
    if types < 1 or chars < 1 or isut not in (0, types) or isstd not in (0, types):
        raise ZoneError(f"the header at byte {at} has counts RFC 8536 forbids")
    return version, (isut, isstd, leap, time, types, chars)


def _block_size(counts: Counts, time_size: int) -> int:
    isut, isstd, leap, time, types, chars = counts
    return time * (time_size + 1) + types * 6 + chars + leap * (time_size + 4) + isstd + isut


def _check_data(data: bytes, at: int, time: int, types: int, chars: int) -> None:
    """The version 2+ data block: ascending transitions, type indices in range, offsets under a day,
    designations ASCII and NUL-terminated."""
    times = struct.unpack_from(f">{time}q", data, at)
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise ZoneError("its transitions are not in ascending order")
    indices = data[at + 8 * time : at + 9 * time]
    if indices and max(indices) >= types:
        raise ZoneError("a transition names a local time type that does not exist")
    records = at + 9 * time
    names = data[records + 6 * types : records + 6 * types + chars]
    if not names.isascii() or not names.endswith(b"\0"):
        raise ZoneError("its time zone designations are not ASCII text ending in NUL")
    for utoff, isdst, index in struct.iter_unpack(">lBB", data[records : records + 6 * types]):
        if abs(utoff) >= _DAY or isdst > 1 or index >= chars:
            raise ZoneError("a local time type has an offset of a day or more, or no designation")


def check_tzif(data: bytes) -> str:
    """Check ``data`` as a version 2+ TZif file within bounds; return its footer's TZ string.

    Raises :class:`ZoneError` saying what is wrong (the caller names the zone).
    """
    if len(data) > MAX_TZIF_BYTES:
        raise ZoneError(f"it is {len(data):,} bytes, more than the {MAX_TZIF_BYTES:,} a TZif file may have here")
    if not data.startswith(b"TZif"):
        raise ZoneError("it is not a TZif file (it does not begin with TZif)")
    version, first = _counts(data, 0)
    if version not in (b"2", b"3", b"4"):
        raise ZoneError("it is not a TZif file of version 2 or later (the version that carries a footer)")
    second = _HEADER.size + _block_size(first, 4)
    again, counts = _counts(data, second)
    if again != version:
        raise ZoneError("its two headers give different versions")
    start = second + _HEADER.size
    footer = start + _block_size(counts, 8)
    if footer >= len(data):
        raise ZoneError(f"it ends inside its data (byte {len(data):,} of {footer + 2:,} or more)")
    _, _, _, time, types, chars = counts
    _check_data(data, start, time, types, chars)
    end = data.find(b"\n", footer + 1)
    if data[footer : footer + 1] != b"\n" or end != len(data) - 1:
        raise ZoneError("its footer is not one line between newlines at the end of the file")
    text = data[footer + 1 : end]
    if not text.isascii():
        raise ZoneError("its footer is not ASCII")
    check_tz_string(text.decode("ascii"))
    return text.decode("ascii")
