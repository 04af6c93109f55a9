"""Fixtures of the ledger suite: a ``ledger`` on SQLite and on PostgreSQL.

PostgreSQL: ``TIDEMARK_TEST_PG_URL`` names a server (any database on it; the
user needs CREATEDB), else ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``
is tried. The session creates one database of its own, empties its schema
before each test and drops it at the end. Without a server those cases are
skipped, saying why.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import SQLAlchemyError

from core.clock import FixedClock
from core.ledger.db import Ledger, open_ledger

from . import NOW
from .os_users import Teammate, another_os_user

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
#: Why PostgreSQL cases are skipped, once known.
_PG_UNAVAILABLE: list[str] = []


def _admin_url() -> str:
    url = os.environ.get("TIDEMARK_TEST_PG_URL") or DEFAULT_PG_URL
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str | None]:
    """A database of this test session on the PostgreSQL server, or None (with the reason kept) when there is none."""
    admin = _admin_url()
    name = f"tidemark_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except SQLAlchemyError as exc:
        engine.dispose()
        reason = str(getattr(exc, "orig", exc) or exc).strip().splitlines()[0]
        _PG_UNAVAILABLE.append(
            f"no PostgreSQL at {make_url(admin).render_as_string()} ({reason}); set TIDEMARK_TEST_PG_URL"
        )
        yield None
        return
    try:
        yield make_url(admin).set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def _reset_pg(url: str) -> None:
    """An empty public schema: each test starts from nothing and migrates it."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty ledger database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.db'}"
    url: str | None = request.getfixturevalue("pg_database")
    if url is None:
        why = _PG_UNAVAILABLE[0] if _PG_UNAVAILABLE else "no PostgreSQL server"
        if os.environ.get("TIDEMARK_REQUIRE_PG"):
            pytest.fail(f"TIDEMARK_REQUIRE_PG is set but {why}")
        pytest.skip(why)
    _reset_pg(url)
    return url


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def ledger(ledger_url: str, clock: FixedClock) -> Iterator[Ledger]:
    """An open, migrated, empty ledger; closed after the test."""
    opened = open_ledger(ledger_url, clock)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def teammate() -> Iterator[Teammate]:
    """Another OS user (removed after the test): needs root, to create them (CI runs as root)."""
    yield from another_os_user()
