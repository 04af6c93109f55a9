"""The ledger and clock of one ledger command.

Every ledger command opens the ledger named by --db (else $SCHEDULER_DB_URL, else
ledger.db in the user's data directory), does one unit of work and closes it.
--now freezes the clock; a local --now is read on the wall clock of the schedule
the command is about (apply: the spec's; backfill: the schedule's), else in UTC.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.cli.arguments import parse_time
from core.cli.common import DB_ENV
from core.errors import first_line

if TYPE_CHECKING:
    import argparse

    from core.clock import Clock, FixedClock, SystemClock
    from core.ledger.db import Ledger

#: Seconds to wait for another program's lock on the ledger before giving up (on
#: PostgreSQL, for the write lock of a command other than ``engine run``).
#: Read when a command runs, so that a test can shorten it.
LOCK_WAIT_SECONDS = 5.0


def db_url(args: argparse.Namespace) -> str | None:
    """--db, else $SCHEDULER_DB_URL, else None (the default ledger)."""
    return args.db or os.environ.get(DB_ENV) or None


def command_clock(args: argparse.Namespace, zone_name: str = "UTC") -> FixedClock | SystemClock:
    """A clock frozen at --now, or the system clock."""
    from core.clock import FixedClock, SystemClock
    from core.time.zones import get_zone

    if args.now is None:
        return SystemClock()
    return FixedClock(parse_time(args.now, "--now", get_zone(zone_name)))


#: SQLSTATEs of a server that refuses a change: a read-only transaction.
_REFUSED_STATES = {"25006": "the ledger is read-only here"}


def _refusal(exc: BaseException) -> str | None:
    """Why the database refused a change, when it did because it may not change the ledger."""
    state = getattr(exc, "sqlstate", None)
    if state in _REFUSED_STATES:
        return _REFUSED_STATES[state]
    said = str(exc).lower()
    if "readonly" in said or "read-only" in said:
        return "the ledger is read-only here"
    return None


def _no_right(args: argparse.Namespace, ledger: Ledger, said: str) -> str:
    """The line for a write the database refused for want of a right: the role, what it lacks,
    the grant this command needs (the window says it in the same words: core.ledger.access)."""
    from core.ledger.role_kinds import refused_line

    command = " ".join(filter(None, (args.command, getattr(args, "engine_command", None))))
    return refused_line(ledger.engine.url.username, said, command)


@contextmanager
def open_command_ledger(args: argparse.Namespace, clock: Clock, *, create: bool = True) -> Iterator[Ledger]:
    """The open ledger; a database that refuses mid-command (locked, gone, read-only) becomes one LedgerError line.

    A command that only reads passes ``create=False``: where there is no ledger it says so and creates none.
    """
    from sqlalchemy.exc import DBAPIError, OperationalError

    from core.errors import LedgerError, LedgerUnavailable
    from core.ledger.access import NO_RIGHT, disk_full, unavailable
    from core.ledger.db import LOCK_NOT_AVAILABLE, open_ledger

    ledger = open_ledger(db_url(args), clock, busy_timeout=LOCK_WAIT_SECONDS, create=create)
    if (args.command, getattr(args, "engine_command", None)) != ("engine", "run"):
        ledger.lock_wait = LOCK_WAIT_SECONDS  # an engine waits its turn; a command says the ledger is busy
    try:
        yield ledger
    except LedgerUnavailable as exc:  # a core call that words the database's failure itself
        if exc.refused is None:
            raise
        raise LedgerError(f"{ledger.where}: {_no_right(args, ledger, exc.detail)}") from None
    # sqlite3's own error too: a few writes use the driver directly, where SQLAlchemy does not wrap it.
    except (DBAPIError, sqlite3.Error) as exc:
        if disk_full(exc) is not None:
            raise LedgerError(f"{ledger.where}: {unavailable(exc)}") from None
        original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
        said = first_line(original)
        if getattr(original, "sqlstate", None) == NO_RIGHT:
            raise LedgerError(f"{ledger.where}: {_no_right(args, ledger, said)}") from None
        refused = _refusal(original)
        if refused is not None:
            raise LedgerError(f"{ledger.where}: {refused} ({said}); nothing was changed") from None
        if not isinstance(exc, OperationalError | sqlite3.OperationalError):
            raise
        if (
            "locked" in said.lower()
            or "busy" in said.lower()
            or getattr(original, "sqlstate", None) == LOCK_NOT_AVAILABLE
        ):
            raise LedgerError(
                f"{ledger.where}: the ledger is locked by another program ({said}); try again when it has finished"
            ) from None
        raise LedgerError(f"{ledger.where}: the ledger cannot be used ({said})") from None
    finally:
        ledger.close()


def upgrade_command_ledger(args: argparse.Namespace) -> str:
    """Migrate the ledger of --db to the newest schema; returns the revision it is now at."""
    from core.ledger.db import upgrade_ledger

    return upgrade_ledger(db_url(args), command_clock(args), busy_timeout=LOCK_WAIT_SECONDS)
