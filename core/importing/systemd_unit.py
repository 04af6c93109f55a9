"""A systemd unit file (``.timer``, ``.service``) read as systemd reads it (systemd.syntax(7)),
each setting kept with its line number; a time span (``5min 20s``) read as systemd.time(7) says.

Lines end at ``\\n``, ``\\r`` or a pair of them, as systemd's ``read_line`` ends them (never at
U+2028, U+0085 and the other breaks ``str.splitlines`` knows); ``[Section]`` headers;
``Key=Value`` lines (spaces, tabs around both dropped, systemd's whitespace, not a no-break
space); ``#`` and ``;`` start a comment line; a line ending in ``\\`` goes on with the next
(joined by a space). A mistake is one :class:`UnitError` naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from core.errors import UserError
from core.importing.input_text import UNIT_BLANKS, input_text, unit_lines

#: A unit file is a few hundred bytes; more than this is not one.
MAX_UNIT_BYTES = 1_000_000
_SECTION = re.compile(r"^\[([^\[\]]+)\]$")
_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
#: systemd.time(7)'s units, in seconds.
_UNITS = {
    **dict.fromkeys(("usec", "us", "µs"), 1e-6),
    **dict.fromkeys(("msec", "ms"), 1e-3),
    **dict.fromkeys(("seconds", "second", "sec", "s", ""), 1.0),
    **dict.fromkeys(("minutes", "minute", "min", "m"), 60.0),
    **dict.fromkeys(("hours", "hour", "hr", "h"), 3600.0),
    **dict.fromkeys(("days", "day", "d"), 86400.0),
    **dict.fromkeys(("weeks", "week", "w"), 604800.0),
    **dict.fromkeys(("months", "month", "M"), 2629800.0),
    **dict.fromkeys(("years", "year", "y"), 31557600.0),
}
#: systemd's unit types: a unit's name ends in one of them (``unit_type_from_string``).
UNIT_TYPES = ("service", "socket", "target", "device", "mount", "automount", "swap", "timer", "path", "slice", "scope")
#: systemd's ``UNIT_NAME_MAX``, less the final NUL.
UNIT_NAME_MAX = 255
#: systemd's ``unit_name_is_valid``: a prefix of its ``VALID_CHARS`` (letters, digits, ``:-_.\``),
#: perhaps ``@instance``, then ``.type``. No ``/``: a name is never a path.
_UNIT_NAME = re.compile(r"[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]*)?\.([a-z]+)")
_SPAN_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?)[ \t]*([A-Za-zµ]*)")


class UnitError(UserError):
    """A unit file that cannot be read; the message starts with the line it concerns."""


@dataclass(frozen=True)
class Setting:
    """``Key=Value`` in a section, and the line it starts on."""

    line: int
    section: str
    key: str
    value: str

    @property
    def text(self) -> str:
        return f"{self.key}={self.value}"


def unit_text(data: bytes) -> str:
    """The text of a unit file's bytes, or a :class:`UnitError` saying why they are not a unit's."""
    try:
        return input_text(data, MAX_UNIT_BYTES, "a unit file")
    except ValueError as exc:
        raise UnitError(str(exc)) from None


def read_unit(text: str) -> list[Setting]:
    """The settings of a unit file, in order."""
    settings: list[Setting] = []
    section: str | None = None
    lines = unit_lines(text)
    number = 0
    while number < len(lines):
        start = number + 1
        raw = lines[number].strip(UNIT_BLANKS)
        number += 1
        if not raw or raw[0] in "#;":
            continue
        parts = [raw]  # joined once: a long run of continued lines costs its length, not its square
        while parts[-1].endswith("\\") and number < len(lines):
            following = lines[number].strip(UNIT_BLANKS)
            number += 1
            if following[:1] in ("#", ";"):
                continue  # a comment inside a continued line is dropped, as systemd does
            parts[-1] = parts[-1][:-1]
            parts.append(following)
        raw = " ".join(parts).removesuffix("\\")
        if any(ord(ch) < 32 and ch != "\t" for ch in raw):
            raise UnitError(f"line {start}: a control character; this is not a unit file")
        header = _SECTION.match(raw)
        if header is not None:
            section = header.group(1)
            continue
        key, equals, value = raw.partition("=")
        key = key.strip(UNIT_BLANKS)
        if not equals or not _KEY.match(key):
            raise UnitError(f"line {start}: {raw[:60]!r} is neither [Section] nor Key=Value")
        if section is None:
            raise UnitError(f"line {start}: {key}= comes before any [Section]")
        settings.append(Setting(start, section, key, value.strip(UNIT_BLANKS)))
    return settings


def unit_name_problem(name: str) -> str | None:
    """Why ``name`` is not the name of a service a timer can start (None: it is one). The words
    never quote a file: the name is checked before anything is opened."""
    found = _UNIT_NAME.fullmatch(name) if len(name) <= UNIT_NAME_MAX else None
    if found is None or found.group(2) not in UNIT_TYPES:
        return (
            f"{name[:60]!r} is not a unit name (letters, digits and :-_.\\, perhaps @instance, then a type "
            "such as .service); a timer's unit is found by its name beside the timer, never by a path"
        )
    if found.group(1) == "@":
        return f"{name} is a template; a timer starts an instance of it, such as {name.replace('@.', '@1.', 1)}"
    if found.group(2) != "service":
        return f"{name} is not a .service; Tidemark imports the command of the service a timer starts"
    return None


def parse_span(text: str) -> timedelta:
    """A systemd time span (``90``, ``5min 20s``, ``1h30m``, ``2.5s``); a bare number is seconds.
    ``ValueError`` when it is not one."""
    words = text.strip(UNIT_BLANKS)
    if not words:
        raise ValueError("an empty time span")
    seconds, at = 0.0, 0
    while at < len(words):
        if words[at] in UNIT_BLANKS:
            at += 1
            continue
        found = _SPAN_PART.match(words, at)
        if found is None or found.group(2) not in _UNITS:
            raise ValueError(f"{text!r} is not a time span such as 30s, 5min or 1h 30min")
        seconds += float(found.group(1)) * _UNITS[found.group(2)]
        at = found.end()
    return timedelta(seconds=seconds)


def span_text(delta: timedelta) -> str:
    """A span as systemd writes one: ``1h 30min``, ``45s``."""
    total = int(delta.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return " ".join(parts) or "0"
