"""The ledger as a front end asks it: one call, one transaction, the database's failures in the core's words.

The query and command functions that take a :class:`~core.ledger.db.Ledger`
(rather than a session) open their transaction here: :func:`reading` for a
question, :func:`writing` for a decision, so that a decision is written whole
or not at all. A database that fails meanwhile (locked, gone, refusing) is a
:class:`~core.errors.LedgerUnavailable`, never a SQLAlchemy type: the window
catches the core's errors only. :func:`database_failures` does the same for
work that calls several of them, or an engine pass.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.actor import Actor
from core.errors import LedgerUnavailable, first_line
from core.ledger.db import Ledger


def unavailable(exc: SQLAlchemyError | sqlite3.Error) -> LedgerUnavailable:
    """The core's error for what the database said: its first line, and whether it was a lock."""
    original = getattr(exc, "orig", None) or exc
    detail = first_line(original)
    low = detail.lower()
    return LedgerUnavailable(detail, busy="locked" in low or "busy" in low)


@contextmanager
def database_failures() -> Iterator[None]:
    """Raise a database's failure inside the block as :class:`~core.errors.LedgerUnavailable`."""
    try:
        yield
    # sqlite3's own error too: SQLite's write lock is taken by the driver in a begin hook,
    # where SQLAlchemy does not wrap what it raises.
    except (SQLAlchemyError, sqlite3.Error) as exc:
        raise unavailable(exc) from exc


@contextmanager
def reading(ledger: Ledger) -> Iterator[Session]:
    """A read session; a database's failure is a :class:`~core.errors.LedgerUnavailable`."""
    with database_failures(), ledger.read() as session:
        yield session


@contextmanager
def writing(ledger: Ledger, actor: Actor | None = None) -> Iterator[Session]:
    """One write transaction of ``actor`` (:meth:`Ledger.write`), committed whole when the
    block ends or rolled back whole; a database's failure is a :class:`~core.errors.LedgerUnavailable`."""
    with database_failures(), ledger.write(actor) as session:
        yield session
