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
from core.ledger.role_kinds import refused_line

#: SQLSTATE insufficient_privilege: the database role lacks a right the work needs.
NO_RIGHT = "42501"


def unavailable(exc: SQLAlchemyError | sqlite3.Error, role: str | None = None) -> LedgerUnavailable:
    """The core's error for what the database said: its first line, whether it was a lock, and,
    when it refused for want of a right, the line naming ``role`` and the grant to ask for."""
    original = getattr(exc, "orig", None) or exc
    detail = first_line(original)
    low = detail.lower()
    refused = None
    if getattr(original, "sqlstate", None) == NO_RIGHT:
        # The window's decisions and schedctl's (apply, pause, reconcile...) all need a publisher.
        refused = refused_line(role, detail, "publish")
    return LedgerUnavailable(detail, busy="locked" in low or "busy" in low, refused=refused)


def role_of(ledger: Ledger) -> str | None:
    """The database role ``ledger`` logs in as (None on SQLite, which has none)."""
    return ledger.engine.url.username if ledger.dialect == "postgresql" else None


@contextmanager
def database_failures(ledger: Ledger | None = None) -> Iterator[None]:
    """Raise a database's failure inside the block as :class:`~core.errors.LedgerUnavailable`
    (naming ``ledger``'s role when the database refused for want of a right)."""
    try:
        yield
    # sqlite3's own error too: SQLite's write lock is taken by the driver in a begin hook,
    # where SQLAlchemy does not wrap what it raises.
    except (SQLAlchemyError, sqlite3.Error) as exc:
        raise unavailable(exc, None if ledger is None else role_of(ledger)) from exc


@contextmanager
def reading(ledger: Ledger) -> Iterator[Session]:
    """A read session; a database's failure is a :class:`~core.errors.LedgerUnavailable`."""
    with database_failures(ledger), ledger.read() as session:
        yield session


@contextmanager
def writing(ledger: Ledger, actor: Actor | None = None) -> Iterator[Session]:
    """One write transaction of ``actor`` (:meth:`Ledger.write`), committed whole when the
    block ends or rolled back whole; a database's failure is a :class:`~core.errors.LedgerUnavailable`."""
    with database_failures(ledger), ledger.write(actor) as session:
        yield session
