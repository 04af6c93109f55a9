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

from core.errors import LedgerUnavailable, first_line
from core.ledger.db import LOCK_NOT_AVAILABLE, Ledger
from core.ledger.role_kinds import refused_line
from core.team.actor import Actor

#: SQLSTATE insufficient_privilege: the database role lacks a right the work needs.
NO_RIGHT = "42501"


def unavailable(exc: SQLAlchemyError | sqlite3.Error, role: str | None = None) -> LedgerUnavailable:
    """The core's error for what the database said: its first line, whether it was a lock, and,
    when it refused for want of a right, the line naming ``role`` and the grant to ask for."""
    full = disk_full(exc)
    original = getattr(exc, "orig", None) or exc
    detail = first_line(full or original)
    low = detail.lower()
    refused = None
    if getattr(original, "sqlstate", None) == NO_RIGHT:
        # The window's decisions and schedctl's (apply, pause, reconcile...) all need a publisher.
        refused = refused_line(role, detail, "publish")
    busy = full is None and (
        "locked" in low or "busy" in low or getattr(original, "sqlstate", None) == LOCK_NOT_AVAILABLE
    )
    return LedgerUnavailable(detail, busy=busy, refused=refused, full=full is not None)


def disk_full(exc: BaseException) -> sqlite3.Error | None:
    """SQLite's "database or disk is full" (SQLITE_FULL: no room on the disk, or the database at
    its size limit) when ``exc`` is it or was raised while handling it; else None.

    A full SQLite database rolls back the whole transaction, so what surfaces can be
    the rollback of a savepoint that went with it (``no such savepoint: sa_savepoint_1``)."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, sqlite3.Error) and getattr(at, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL:
            return at
        at = at.__cause__ or at.__context__
    return None


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
