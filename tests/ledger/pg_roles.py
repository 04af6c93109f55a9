"""Database roles for tests on a PostgreSQL ledger: made with ``schedctl db grant`` under a
name unique to the test (roles are server-wide), logged in as, and dropped at the end."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from io import StringIO
from typing import Any

from sqlalchemy import create_engine, make_url, text

from core import cli


def as_role(url: str, role: str) -> str:
    """The ledger's URL, logged in as ``role`` (the test server trusts local connections)."""
    return make_url(url).set(username=role, password=None).render_as_string(hide_password=False)


def owner_sql(url: str, sql: str, **params: Any) -> list[Any]:
    """``sql`` as the ledger's owner (the URL's own role), in a transaction of its own."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            result = conn.execute(text(sql), params)
            return list(result) if result.returns_rows else []
    finally:
        engine.dispose()


def drop_role(url: str, role: str) -> None:
    """DROP OWNED BY (its grants) and DROP ROLE, quoted by the driver (a name may hold % and :)."""
    import psycopg
    from psycopg import sql

    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def grant(url: str, role: str, kind: str) -> None:
    """``schedctl db grant ROLE --as KIND`` as the owner; it must succeed."""
    with redirect_stdout(StringIO()):
        assert cli.main(["db", "grant", role, "--as", kind, "--db", url]) == 0


@contextmanager
def granted(url: str, *kinds: str, prefix: str = "tm") -> Iterator[list[str]]:
    """One new role per kind (``tm_<tag>_publisher``, ``tm_<tag>_publisher2`` for a kind given
    twice...), granted that kind; dropped at the end."""
    tag = uuid.uuid4().hex[:8]
    names = [f"{prefix}_{tag}_{kind}{kinds[:n].count(kind) or ''}" for n, kind in enumerate(kinds)]
    try:
        for name, kind in zip(names, kinds, strict=True):
            grant(url, name, kind)
        yield names
    finally:
        for name in names:
            drop_role(url, name)
