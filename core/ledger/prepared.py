"""Statements built once and run with the least overhead the backend allows.

On the engine's hot path (a claim, an outcome, their events) SQLAlchemy's
per-execution work (parameter processing, result set-up, events) costs more
than SQLite's own work. A :class:`Prepared` statement is compiled once per
dialect. On SQLite it then runs on the driver's connection, inside the
session's transaction, with the few value types the ledger binds (text,
numbers, instants, states, JSON) converted here exactly as the column types
convert them. On PostgreSQL it does the same in a transaction that shares the
write lock (an engine's: :func:`core.ledger.db.run_shared`), and elsewhere
runs through SQLAlchemy Core as usual.

Results come back as plain tuples; :func:`instant` reads an instant column.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from psycopg.types.json import Json
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session
from sqlalchemy.sql.compiler import Compiled

from core.ledger.db import DRIVER, SharedWrite, run_shared, shared_write

#: Takes a statement's bound values from a mapping, in the statement's order.
Picker = Callable[[Mapping[str, Any]], tuple[Any, ...]]
#: Types SQLite takes as they are (the common case, looked up first).
_PLAIN = frozenset({str, int, float, bytes, type(None)})


def _bound(value: Any, sqlite: bool) -> Any:
    """A bound value as the ledger's column types store it on SQLite (``sqlite``) or send it
    to PostgreSQL: an instant must be aware (UtcDateTime), a state is its text (EnumText:
    psycopg would send an Enum's name), JSON is JSON."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, datetime):
        zone = value.tzinfo
        if zone is None:
            raise ValueError(f"the ledger stores instants; {value!r} has no time zone")
        if not sqlite:
            return value
        return (value if zone is UTC else value.astimezone(UTC)).isoformat(" ", "microseconds")[:26]
    if isinstance(value, Enum):
        return str(value._value_)
    if isinstance(value, (dict, list)):
        return json.dumps(value) if sqlite else Json(value)
    return value


#: The instant converted last and its text (SQLite): one transaction binds the same ``now``
#: several times (its outcome's change, the attempt's end, the events). Compared by identity,
#: and the instant is held here, so its id is never another's; a pair read and written whole.
_last_instant: tuple[datetime | None, str] = (None, "")


def sqlite_instant(value: datetime) -> str:
    """An instant as the ledger's UtcDateTime column stores it on SQLite (it must be aware)."""
    global _last_instant
    last = _last_instant
    if value is last[0]:
        return last[1]
    zone = value.tzinfo
    if zone is None:
        raise ValueError(f"the ledger stores instants; {value!r} has no time zone")
    text = (value if zone is UTC else value.astimezone(UTC)).isoformat(" ", "microseconds")[:26]
    _last_instant = (value, text)
    return text


def _sqlite_value(value: Any) -> Any:
    """A bound value as the ledger's column types store it on SQLite."""
    if isinstance(value, datetime):
        return sqlite_instant(value)
    if isinstance(value, Enum):  # a state: its text as it is (no hash of the member to look it up)
        text = value._value_
        return text if type(text) is str else str(text)
    return _bound(value, True)


def _picker(order: Sequence[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The bound values of a statement, in its order, taken from a mapping in one call."""
    if len(order) == 1:
        name = order[0]
        return lambda values: (values[name],)
    if not order:
        return lambda _values: ()
    return operator.itemgetter(*order)


def _sqlite_row(pick: Picker, defaults: dict[str, Any], params: Mapping[str, Any]) -> list[Any]:
    """The bound values of one execution on SQLite, in the statement's order. Most are text
    or numbers, taken as they are without a call each (the hot path binds a few dozen a job)."""
    plain = _PLAIN
    convert = _sqlite_value
    values = {**defaults, **params} if defaults else params
    return [value if type(value) in plain else convert(value) for value in pick(values)]


def _pg_value(value: Any) -> Any:
    """A bound value as the ledger's column types send it to PostgreSQL."""
    return _bound(value, False)


def instant(value: datetime | str | None) -> datetime | None:
    """An instant column's value, aware UTC, from either backend."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Prepared:
    """One statement (with ``bindparam`` placeholders), compiled once per dialect."""

    def __init__(self, statement: Any) -> None:  # an Insert, Update or Select
        self.statement = statement
        self._sqlite: tuple[str, Sequence[str], dict[str, Any], Picker] | None = None
        self._postgresql: tuple[str, dict[str, Any]] | None = None

    def _compiled_for_sqlite(self, session: Session) -> tuple[str, Sequence[str], dict[str, Any], Picker]:
        if self._sqlite is None:
            compiled: Compiled = self.statement.compile(dialect=session.get_bind().dialect)
            order = compiled.positiontup  # type: ignore[attr-defined]
            assert order is not None, "SQLite binds by position"
            # The statement's own constants (states, say) converted once, not at each execution.
            defaults = {name: _sqlite_value(value) for name, value in compiled.params.items()}
            self._sqlite = (compiled.string, list(order), defaults, _picker(list(order)))
        return self._sqlite

    def _on_sqlite(self, session: Session, params: Mapping[str, Any]) -> Any:
        """Run it on SQLite's driver connection of the session's transaction, or None when the
        session is not SQLite's; sqlite3's cursor. A held writer's transaction (``DRIVER``, the
        engine's workers) has its connection at hand: no look-up of the dialect or connection."""
        driver = _sqlite_driver(session)
        if driver is None:
            return None
        compiled = self._sqlite
        if compiled is None:
            compiled = self._compiled_for_sqlite(session)
        sql, _order, defaults, pick = compiled
        return driver.execute(sql, _sqlite_row(pick, defaults, params))

    def _on_server(self, session: Session, shared: SharedWrite, params: Mapping[str, Any]) -> Any:
        """Run it on a shared write's driver connection (PostgreSQL); psycopg's cursor."""
        if self._postgresql is None:
            compiled: Compiled = self.statement.compile(dialect=postgresql.psycopg.dialect())  # type: ignore[no-untyped-call]
            defaults = {name: _pg_value(value) for name, value in compiled.params.items()}
            self._postgresql = (compiled.string, defaults)
        sql, defaults = self._postgresql
        plain = _PLAIN
        values = {
            name: value if type(value) in plain else _pg_value(value)
            for name, value in ({**defaults, **params} if defaults else params).items()
        }
        return run_shared(session, shared, sql, values)

    def first(self, session: Session, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """Run it; the first row (RETURNING or SELECT), or None."""
        cursor = self._on_sqlite(session, params)
        if cursor is not None:
            try:
                found = cursor.fetchone()
                return None if found is None else tuple(found)
            finally:
                cursor.close()
        shared = shared_write(session)
        if shared is not None:
            found = self._on_server(session, shared, params).fetchone()
            return None if found is None else tuple(found)
        row = session.connection().execute(self.statement, dict(params)).first()
        return None if row is None else tuple(row)

    def all(self, session: Session, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Run it; every row (a SELECT)."""
        cursor = self._on_sqlite(session, params)
        if cursor is None:
            return [tuple(row) for row in session.connection().execute(self.statement, dict(params))]
        try:
            return [tuple(row) for row in cursor.fetchall()]
        finally:
            cursor.close()

    def run(self, session: Session, params: Mapping[str, Any]) -> None:
        """Run it for its effect."""
        cursor = self._on_sqlite(session, params)
        if cursor is not None:
            cursor.close()
            return
        shared = shared_write(session)
        if shared is not None:
            self._on_server(session, shared, params)
            return
        session.connection().execute(self.statement, dict(params))

    def run_many(self, session: Session, rows: Iterable[Mapping[str, Any]]) -> None:
        """Run it once per row (an INSERT of several rows)."""
        rows = list(rows)
        if not rows:
            return
        driver = _sqlite_driver(session)
        if driver is None:
            session.connection().execute(self.statement, [dict(r) for r in rows])
            return
        sql, order, defaults, pick = self._compiled_for_sqlite(session)
        # Rows of one call often share a value (one instant and one JSON payload for
        # a whole batch of events): convert each distinct object once.
        converted: dict[int, Any] = {}

        plain = _PLAIN

        def convert(value: Any) -> Any:  # asked only for what is not plain text or a number
            key = id(value)  # the objects live as long as ``rows``: ids are not reused meanwhile
            if key not in converted:
                converted[key] = _sqlite_value(value)
            return converted[key]

        if all(set(order) <= r.keys() for r in rows):
            picked: Iterable[tuple[Any, ...]] = map(pick, rows)
        else:
            picked = (tuple((defaults | dict(r))[name] for name in order) for r in rows)
        tuples = [tuple(v if type(v) in plain else convert(v) for v in values) for values in picked]
        driver.executemany(sql, tuples).close()


def _sqlite_driver(session: Session) -> Any:
    """SQLite's driver connection of the session's transaction (:func:`driver_of`), or None
    when the session is not SQLite's; a held writer's is at hand with no look-up."""
    held = session.info.get(DRIVER)
    if held is not None:
        return held
    if session.get_bind().dialect.name != "sqlite":
        return None
    return session.connection().connection.driver_connection


def driver_of(session: Session) -> Any:
    """The driver's connection of the session's transaction (begun already by Ledger.write);
    a held writer (``Ledger.writer``) keeps it at hand for the whole transaction."""
    held = session.info.get(DRIVER)
    return held if held is not None else session.connection().connection.driver_connection
