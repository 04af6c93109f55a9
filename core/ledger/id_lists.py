"""A list of ids (or of id pairs) as one condition whose SQL text does not depend on its length.

SQLAlchemy's ``column.in_(ids)`` renders one text per list length
(``IN (?, ?, ...)``; for pairs ``(a, b) IN (VALUES (?, ?), ...)``), and
SQLite's driver keeps every text it runs prepared, in a cache of 128
statements per connection. A pass reads ids by the hundred, a different count
each time, so that cache filled with one-off statements of up to 143 KiB each.
On SQLite the list goes in as one JSON text instead, read by ``json_each``:
one short text, one small prepared statement, whatever the count.

PostgreSQL keeps ``in_()``: its driver does not keep every text prepared.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Integer, String, bindparam, func, literal_column, select, tuple_
from sqlalchemy.orm import Session


def _on_sqlite(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def among(session: Session, column: Any, ids: Collection[str]) -> ColumnElement[bool]:
    """``column IN ids``, as one constant text on SQLite."""
    if not _on_sqlite(session):
        return column.in_(list(ids))  # type: ignore[no-any-return]
    listed = func.json_each(bindparam(None, json.dumps(list(ids)), type_=String)).table_valued("value")
    return column.in_(select(listed.c.value))  # type: ignore[no-any-return]


def among_pairs(session: Session, first: Any, second: Any, pairs: Sequence[tuple[str, int]]) -> ColumnElement[bool]:
    """``(first, second) IN pairs`` (an id and a number each), as one constant text on SQLite."""
    if not _on_sqlite(session):
        return tuple_(first, second).in_(list(pairs))
    listed = func.json_each(bindparam(None, json.dumps(list(pairs)), type_=String)).table_valued("value")
    return tuple_(first, second).in_(
        select(
            func.json_extract(listed.c.value, literal_column("'$[0]'"), type_=String),
            func.json_extract(listed.c.value, literal_column("'$[1]'"), type_=Integer),
        )
    )
