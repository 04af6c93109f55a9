"""PostgreSQL: a write that shares the write lock (an engine's) takes it with its first
statement, in the same statement when that locks schedules' rows, and a serialized writer
(a pause, a fence) waits for it from then on (docs/decisions.md, "The shared write lock with
the transaction's first statement")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event, text, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.ledger import db as db_module
from core.ledger.db import LOCK_NOT_AVAILABLE, WRITE_LOCK_KEY, Ledger, lock_schedules, open_ledger
from core.ledger.models import LedgerMeta

pytestmark = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)

_HELD = text(
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock' "
    "AND pid = pg_backend_pid() AND classid = :high AND objid = :low"
)


def _held(session: Session) -> bool:
    key = WRITE_LOCK_KEY & 0xFFFFFFFFFFFFFFFF
    return bool(session.scalar(_HELD, {"high": key >> 32, "low": key & 0xFFFFFFFF}))


def _rows_of_nothing(session: Session) -> None:
    assert lock_schedules(session, ["no-such-schedule"]) == set()


def _a_read(session: Session) -> None:
    session.execute(text("SELECT 1"))


@pytest.mark.parametrize("first", [_rows_of_nothing, _a_read], ids=["schedule_rows", "any_statement"])
def test_a_shared_write_holds_the_lock_from_its_first_statement(
    ledger: Ledger, clock: FixedClock, first: Callable[[Session], None]
) -> None:
    """Held from the first statement (even one that locks no row), and a serialized write
    that may wait 0.2 s is refused while it is open."""
    with ledger.write(serialize=False) as session:
        first(session)
        assert _held(session)
        other = open_ledger(ledger_url_of(ledger), clock)
        other.lock_wait = 0.2
        try:
            with pytest.raises(OperationalError) as refused, other.write() as blocked:
                blocked.execute(update(LedgerMeta).values(execution_epoch=LedgerMeta.execution_epoch + 1))
            assert getattr(refused.value.orig, "sqlstate", None) == LOCK_NOT_AVAILABLE
        finally:
            other.close()


def test_the_lock_with_the_schedule_rows_is_one_statement(ledger: Ledger) -> None:
    """The hot path's first statement takes the lock and the rows together: nothing else is
    sent before it."""
    sent: list[str] = []
    ledger.role()  # asked once per ledger, in the first write otherwise

    def before(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement)

    real = db_module.run_shared

    def past_sqlalchemy(session: Session, shared: db_module.SharedWrite, sql: str, params: object) -> object:
        before(None, None, sql)
        return real(session, shared, sql, params)

    event.listen(ledger.engine, "before_cursor_execute", before)
    try:
        with monkeypatched(db_module, "run_shared", past_sqlalchemy), ledger.write(serialize=False) as session:
            _rows_of_nothing(session)
            assert _held(session)
    finally:
        event.remove(ledger.engine, "before_cursor_execute", before)
    assert len(sent) == 2  # the rows (with the lock), then the check above
    assert "pg_advisory_xact_lock_shared" in sent[0] and "FOR NO KEY UPDATE" in sent[0]


def test_a_shared_write_that_sends_nothing_takes_no_lock(ledger: Ledger) -> None:
    """A connection whose shared write sent nothing owes its next user no lock."""
    with ledger.write(serialize=False):
        pass
    with ledger.read() as session:
        assert not _held(session)


@contextmanager
def monkeypatched(module: object, name: str, value: object) -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    patch.setattr(module, name, value)
    try:
        yield
    finally:
        patch.undo()


def ledger_url_of(ledger: Ledger) -> str:
    return ledger.engine.url.render_as_string(hide_password=False)
