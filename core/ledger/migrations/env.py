"""Alembic environment of the ledger.

Driven from code (:mod:`core.ledger.db`), which hands over an open connection in
``config.attributes["connection"]`` so that checks and migrations share one
transaction. Given only ``sqlalchemy.url`` (a developer running Alembic by
hand), it connects by itself.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from core.ledger.models import VERSION_TABLE, Base

config = context.config
target_metadata = Base.metadata


def _configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        version_table=VERSION_TABLE,
        # SQLite cannot ALTER most things: later migrations copy-and-move tables.
        render_as_batch=True,
        compare_type=True,
        **kwargs,  # type: ignore[arg-type]
    )


def _run_with(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    """Emit SQL text instead of running it (``alembic upgrade --sql``)."""
    _configure(url=config.get_main_option("sqlalchemy.url"), literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_with(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("set sqlalchemy.url or pass a connection in config.attributes['connection']")
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.begin() as conn:
            _run_with(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
