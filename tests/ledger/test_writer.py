"""``Ledger.writer``: a worker's many write transactions on one held connection,
on both backends. Each commits on its own, a failed one changes nothing, and
nothing loaded in one is reused stale in the next."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import NullPool

from core.ledger.db import DRIVER, Ledger
from core.ledger.models import LedgerMeta


def _epoch(ledger: Ledger) -> int:
    with ledger.read() as session:
        return int(session.scalar(select(LedgerMeta.execution_epoch)) or 0)


def test_each_transaction_commits_when_its_block_ends(ledger: Ledger) -> None:
    start = _epoch(ledger)
    with ledger.writer() as transaction:
        with transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
        assert _epoch(ledger) == start + 1  # visible to others before the writer is done
        with transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
        assert _epoch(ledger) == start + 2


def test_a_failed_transaction_changes_nothing_and_the_next_one_works(ledger: Ledger) -> None:
    start = _epoch(ledger)
    with ledger.writer() as transaction:
        with pytest.raises(RuntimeError, match="half way"), transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=99))
            raise RuntimeError("half way")
        assert _epoch(ledger) == start
        with transaction() as session:
            meta = session.get(LedgerMeta, 1)
            assert meta is not None
            meta.execution_epoch = start + 5  # an ORM change, flushed before the commit
    assert _epoch(ledger) == start + 5


def test_rows_loaded_in_one_transaction_are_read_again_in_the_next(ledger: Ledger) -> None:
    with ledger.writer() as transaction:
        with transaction() as session:
            first = session.get(LedgerMeta, 1)
            assert first is not None
            seen = first.execution_epoch
        with ledger.write() as other:  # another writer changes the row in between
            other.execute(update(LedgerMeta).values(execution_epoch=seen + 3))
        with transaction() as session:
            again = session.get(LedgerMeta, 1)
            assert again is not None
            assert again.execution_epoch == seen + 3


def test_sqlite_keeps_the_driver_connection_at_hand_inside_a_transaction(ledger: Ledger) -> None:
    with ledger.writer() as transaction:
        with transaction() as session:
            held = session.info.get(DRIVER)
            assert (held is session.connection().connection.driver_connection) == (ledger.dialect == "sqlite")
        assert DRIVER not in session.info
        with pytest.raises(KeyError), transaction() as session:
            raise KeyError("boom")
        assert DRIVER not in session.info


@pytest.mark.parametrize("ledger_url", ["sqlite"], indirect=True)
def test_a_held_sqlite_connection_polls_for_the_lock_and_gets_its_wait_back(ledger: Ledger) -> None:
    """A held writer's transactions begin without setting busy_timeout around each BEGIN
    IMMEDIATE (two statements a transaction): the connection polls for the whole loop, and has
    its own wait again once it goes back to the pool."""
    sent: list[str] = []
    with ledger.writer() as transaction:
        with transaction() as session:
            driver = session.info[DRIVER]
            assert driver.execute("PRAGMA busy_timeout").fetchone()[0] == 2
        driver.set_trace_callback(sent.append)
        with transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
        driver.set_trace_callback(None)
    assert not [sql for sql in sent if "busy_timeout" in sql], sent
    assert driver.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)  # a SQLite connection is a file: nothing drops
def test_a_server_connection_that_dropped_between_transactions_is_replaced(ledger: Ledger) -> None:
    """A task can run for hours between two transactions of a worker; its outcome
    must still be recorded if the server closed the connection meanwhile."""
    assert ledger.dialect == "postgresql"
    start = _epoch(ledger)
    with ledger.writer() as transaction:
        with transaction() as session:
            pid = session.scalar(text("SELECT pg_backend_pid()"))
        admin = create_engine(ledger.engine.url, poolclass=NullPool)  # not a pooled one: it could be that very one
        with admin.connect() as other:  # the server ends that connection
            assert other.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        admin.dispose()
        with transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
    assert _epoch(ledger) == start + 1


def test_a_write_the_database_refuses_rolls_back_and_the_next_one_works(ledger: Ledger) -> None:
    start = _epoch(ledger)
    with ledger.writer() as transaction:
        with pytest.raises(IntegrityError), transaction() as session:
            meta = session.get(LedgerMeta, 1)
            assert meta is not None
            meta.execution_epoch = start + 9
            session.add(LedgerMeta(id=2, ledger_id="x", created_at=meta.created_at))  # one row only: refused
        assert _epoch(ledger) == start
        with transaction() as session:
            session.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
    assert _epoch(ledger) == start + 1
