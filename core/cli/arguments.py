"""The command line's own parsing: a quiet argparse, argument types, and reading times.

Argument types reject a bad value with :class:`argparse.ArgumentTypeError`, which
:class:`Parser` turns into one :class:`~core.cli.common.UsageError` line.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, NoReturn

from core.cli.common import UsageError

if TYPE_CHECKING:
    from datetime import datetime
    from zoneinfo import ZoneInfo

_DATE_FORM = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$", re.I)
_INSTANT_SUFFIX = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr instead of usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


# --- argument types -------------------------------------------------------------------


def positive_count(text: str) -> int:
    """A whole number of at least 1 (--count, --limit)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


#: The most days ``--days`` looks ahead (ten years: beyond any horizon).
MAX_DAYS = 3660


def day_count(text: str) -> int:
    """A whole number of days from 1 to :data:`MAX_DAYS` (--days)."""
    value = positive_count(text)
    if value > MAX_DAYS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_DAYS}, got {value}")
    return value


def poll_seconds(text: str) -> float:
    """Seconds between engine passes, from 0.05 to an hour (--poll)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.05 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be between 0.05 and 3600 seconds, got {text}")
    return value


def port_number(text: str) -> int:
    """A TCP port, 0 meaning any free one (--metrics-port)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is between 0 and 65535, got {value}")
    return value


def ledger_text(text: str) -> str:
    """Text the ledger records or looks up (--note, a schedule or occurrence id): not bytes that are
    no UTF-8 text, which a shell can pass."""
    from core.os_text import string_problem

    problem = string_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def engine_label(text: str) -> tuple[str, str]:
    """``--label KEY=VALUE``: a label of the engine (not ``host`` or ``user``, which are built in)."""
    from core.team.placement import LabelError, parse_label

    ledger_text(text)
    try:
        return parse_label(text)
    except LabelError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--label ")) from None


def trusted_user(text: str) -> str:
    """``--trust NAME``: a publisher whose revisions the engine runs (a database role on
    PostgreSQL, an OS user on SQLite), or ``*`` for anyone."""
    from core.team.placement import LabelError, parse_trust

    ledger_text(text)
    try:
        return parse_trust(text)
    except LabelError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--trust ")) from None


def time_text(text: str) -> str:
    """A time option's text, stripped; read later by :func:`parse_time`, once its zone is known."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a date-time such as 2026-03-08T07:00:00Z")
    return text.strip()


# --- times ----------------------------------------------------------------------------


def parse_time(text: str, option: str, zone: ZoneInfo) -> datetime:
    """An option's time as an aware UTC instant; local times are read in ``zone`` (see --help)."""
    from core.recurrence.resolve import candidates, gap_transition
    from core.time.formats import parse_instant, parse_local

    try:
        if _INSTANT_SUFFIX.search(text):
            return parse_instant(text)
        local = parse_local(text)
    except ValueError:
        if _DATE_FORM.match(text):
            raise UsageError(f"{option}: {text!r} is not a real date-time") from None
        raise UsageError(
            f"{option}: {text!r} is not a date-time; give an instant such as 2026-03-08T07:00:00Z, "
            "or a local date-time or date such as 2026-03-08T02:30 or 2026-03-08"
        ) from None
    try:
        found = candidates(zone, local)
        return found[0] if found else gap_transition(zone, local).utc
    except OverflowError:
        raise UsageError(
            f"{option}: {text!r} in {zone.key} lies outside the calendar (years 1 to 9999) as an instant"
        ) from None


def current_time(args: argparse.Namespace, zone: ZoneInfo) -> datetime:
    """--now read in ``zone``, else the system clock's time."""
    if args.now is not None:
        return parse_time(args.now, "--now", zone)
    from core.clock import SystemClock

    return SystemClock().now()
