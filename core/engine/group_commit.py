"""Several workers' write transactions joined into one commit (SQLite).

An engine's workers each write twice per run: the claim before the task, the
outcome (with the next claim) after it. On SQLite every commit is an fsync
(``synchronous = FULL``), and the write lock lets one writer in at a time, so
workers finishing together would otherwise queue for it and commit one by
one. :class:`GroupCommit` lets a worker that wants to write join the
transaction another worker has open: the first one in opens it (the leader)
and writes first, those arriving before it commits add their own unit of
work to it, one at a time, each in a savepoint of its own, and the leader
commits once for all of them, up to ``limit`` units. A unit alone costs no
savepoint.

Nothing of the rule that a task never starts without a durable claim
changes: a unit's ``with`` block returns only once the transaction holding
it has committed (or raises if it did not), and the worker starts its task
after that. A unit that raises is rolled back to its savepoint alone and
raises in its own worker; the others commit (when the leader's own unit
fails, the transaction is rolled back before any other unit has written,
and those waiting go on in another). An outcome waits in its batch
at most until the units that joined before it are written; one lost to a
crash before the commit is recovered as any lost outcome (invariant 5).

PostgreSQL does not use it: engines there run side by side, each transaction
holding the rows of the schedules it decides on, and joining several
schedules' units in one transaction would lock them in arrival order, which
two engines could meet in a deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from sqlalchemy.orm import Session

from core.ledger.db import DRIVER

#: A write transaction to open: a worker's own (its held connection, or the ledger's ``write``).
Write = Callable[[], AbstractContextManager[Session]]


class GroupCommitFailed(RuntimeError):
    """The transaction a unit joined did not commit: nothing of the unit was written."""


@dataclass
class _Batch:
    """One transaction and the units of work in it."""

    members: int = 1
    """Units that joined it (its leader's included)."""
    done: int = 0
    """Units whose block has ended (written to their savepoint, or rolled back)."""
    open: bool = True
    """Whether another unit may still join."""
    session: Session | None = None
    """The transaction's session, once its leader has opened it."""
    finished: bool = False
    broken: bool = False
    """Its leader's unit failed: the transaction is rolled back, and no other unit may write in it."""
    error: BaseException | None = None
    """Why it did not commit (None: it did, when finished)."""
    lost: BaseException | None = None
    """The failure of a unit that took the transaction's earlier work with it (see
    :func:`_savepoint`): its leader must not commit what is left."""


class GroupCommit:
    """Joins the write transactions of an engine's workers (see the module's docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Units of work per transaction at most (so the write lock is never held long)."""
        self.commits = 0
        """Transactions committed so far (for tests and benchmarks)."""
        self._cond = threading.Condition()
        self._batch: _Batch | None = None  # the one others may join
        self._turn = threading.Lock()  # one unit at a time on the session

    def wait_for_members(self, count: int, timeout: float) -> bool:
        """Wait until the open transaction holds ``count`` units (for tests); False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._batch is not None and self._batch.members >= count, timeout=timeout
            )

    @contextmanager
    def transaction(self, own: Write) -> Iterator[Session]:
        """A write transaction for one unit of work: the batch open now, else a new one opened
        with ``own``. The block's changes are committed when the ``with`` ends without error."""
        while True:
            with self._cond:
                batch = self._batch
                leader = batch is None or not batch.open or batch.members >= self.limit
                if leader or batch is None:
                    batch = self._batch = _Batch()
                else:
                    batch.members += 1
                self._cond.notify_all()
            if leader:
                with self._lead(batch, own) as session:
                    yield session
                return
            if self._take_turn(batch):
                break  # else the transaction it joined ended before its turn: another one
        with self._member(batch) as session:
            yield session

    @contextmanager
    def _lead(self, batch: _Batch, own: Write) -> Iterator[Session]:
        """The first unit: it opens the transaction, writes first (no savepoint: if it fails the
        transaction is rolled back, and those who joined meanwhile go on in another one), waits
        for the units that joined, and commits."""
        try:
            with own() as session:
                self._turn.acquire()  # before anyone else can write on the session
                with self._cond:
                    batch.session = session
                    self._cond.notify_all()
                try:
                    yield session
                    session.flush()  # its changes written before another unit's savepoint
                except BaseException:
                    with self._cond:
                        batch.broken = True
                        batch.open = False
                    raise
                finally:
                    self._turn.release()
                    self._done(batch)
                with self._cond:
                    self._cond.wait_for(lambda: batch.done == batch.members)
                    batch.open = False
                    if self._batch is batch:
                        self._batch = None
                if batch.lost is not None:
                    raise GroupCommitFailed("a unit's failure ended the transaction it had joined") from batch.lost
            with self._cond:
                self.commits += 1
        except BaseException as exc:
            batch.error = exc
            raise
        finally:
            with self._cond:
                batch.open = False
                batch.finished = True
                if self._batch is batch:
                    self._batch = None
                self._cond.notify_all()

    def _take_turn(self, batch: _Batch) -> bool:
        """Wait for the joined transaction to open and for this unit's turn on it. False (the turn
        not held) when it ended first: its leader failed, and nothing of this unit was written."""
        with self._cond:
            self._cond.wait_for(lambda: batch.session is not None or batch.finished)
        self._turn.acquire()
        if batch.session is not None and not batch.broken and batch.lost is None and not batch.finished:
            return True
        self._turn.release()
        self._done(batch)
        return False

    @contextmanager
    def _member(self, batch: _Batch) -> Iterator[Session]:
        """A unit that joined (its turn held): in a savepoint of its own, then it waits for the commit."""
        session = batch.session
        assert session is not None
        try:
            with _savepoint(session, batch):
                yield session
        finally:
            self._turn.release()
            self._done(batch)
        with self._cond:
            self._cond.wait_for(lambda: batch.finished)
        if batch.error is not None:
            raise GroupCommitFailed("the transaction this write joined did not commit") from batch.error

    def _done(self, batch: _Batch) -> None:
        with self._cond:
            batch.done += 1
            self._cond.notify_all()


#: A joined unit's savepoint on the driver's connection (one at a time: units take turns).
_SAVEPOINT, _RELEASE, _ROLLBACK_TO = "SAVEPOINT unit", "RELEASE unit", "ROLLBACK TO unit"


@contextmanager
def _savepoint(session: Session, batch: _Batch) -> Iterator[None]:
    """A savepoint around one joined unit. On a held writer's connection (``DRIVER``: the
    engine's workers) it is sent to the driver directly, two statements and nothing of
    SQLAlchemy's nested transaction; the unit's changes made through the session are flushed
    before it is released, and a unit rolled back leaves the session holding no row it loaded
    (what it changed is undone, and no other unit keeps rows across its block). Elsewhere,
    SQLAlchemy's ``begin_nested``.

    A unit's failure can end the whole transaction, the other units' work with it: SQLite
    rolls everything back on a full disk, and SQLAlchemy, which does not know of the driver's
    savepoint, rolls back (or gives up) the session's transaction when a flush fails. That is
    seen here (the driver no longer in a transaction, or the session's no longer active) and
    the batch marked ``lost``: its leader then commits nothing, and every unit in it fails, as
    when its commit fails (a commit of what SQLite had already rolled back would report the
    others' writes durable when none is)."""
    driver = session.info.get(DRIVER)
    if driver is None:
        nested = session.begin_nested()
        session.connection()  # emitted now: the hot path's statements go past the session
        try:
            yield
        except BaseException:
            nested.rollback()
            raise
        nested.commit()
        return
    driver.execute(_SAVEPOINT).close()
    try:
        yield
        session.flush()
    except BaseException as exc:
        transaction = session.get_transaction()
        if not driver.in_transaction or (transaction is not None and not transaction.is_active):
            batch.lost = exc  # no unit joins it any more, nor writes in it (_take_turn)
            raise
        driver.execute(_ROLLBACK_TO).close()
        driver.execute(_RELEASE).close()
        session.expunge_all()
        raise
    driver.execute(_RELEASE).close()
