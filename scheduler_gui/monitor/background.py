"""Ledger work off the GUI thread for the monitor.

Most monitor views ask one question at a time and want only the newest answer:
they use the shared :class:`scheduler_gui.background.LatestOnly` with
:func:`describe_error`. Two need several answers in flight at once, which
``LatestOnly`` would drop: the occurrences table (each page is its own
answer) and the attention queue's decisions (every click must be carried
out). They use :class:`Background`: one worker thread, requests numbered per
name, each answer delivered to its own callback on the GUI thread; with
``latest_only`` an answer older than the newest request of its name is dropped.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from core.errors import LedgerError, LedgerUnavailable, UserError
from core.ledger.access import database_failures

_log = logging.getLogger(__name__)


def describe_error(exc: BaseException) -> str:
    """One line a person can act on: a user-facing error as it is, a database's complaint by its first line."""
    if isinstance(exc, LedgerUnavailable):
        if exc.refused is not None:  # a write the role may not make: the role, what it lacks, the grant
            return exc.refused
        if exc.busy:
            return f"the ledger is busy (locked by another program); trying again ({exc.detail})"
        return f"the ledger cannot be read ({exc.detail})"
    if isinstance(exc, UserError):
        return str(exc)
    return f"unexpected error: {type(exc).__name__}: {exc}"


T = TypeVar("T")


def ledger_work(work: Callable[[], T]) -> Callable[[], T]:
    """``work``, with a database's complaint (the core's :class:`~core.errors.LedgerUnavailable`)
    turned into a :class:`~core.errors.LedgerError` that says it in the monitor's words: a
    locked or unreachable ledger is the person's environment, not a bug, so it is shown
    (and retried) without a traceback."""

    def run() -> T:
        try:
            with database_failures():
                return work()
        except LedgerUnavailable as exc:
            raise LedgerError(describe_error(exc)) from None

    return run


class _Relay(QObject):
    done = Signal(str, int, object)
    failed = Signal(str, int, str)


class _Job(QRunnable):
    def __init__(self, name: str, number: int, work: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._name, self._number, self._work, self._relay = name, number, work, relay

    def run(self) -> None:
        try:
            with database_failures():
                result = self._work()
        except Exception as exc:  # reported as a message; a bug is logged with its traceback too
            if not isinstance(exc, UserError):
                _log.error("monitor work failed", exc_info=exc)
            self._relay.failed.emit(self._name, self._number, describe_error(exc))
            return
        self._relay.done.emit(self._name, self._number, result)


class Background(QObject):
    """Runs callables on one worker thread; ``submit`` returns at once."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._numbers = itertools.count(1)
        self._wanted: dict[str, int] = {}
        self._handlers: dict[tuple[str, int], tuple[Callable[[Any], None], Callable[[str], None] | None]] = {}

    def submit(
        self,
        name: str,
        work: Callable[[], Any],
        on_done: Callable[[Any], None],
        on_error: Callable[[str], None] | None = None,
        *,
        latest_only: bool = True,
    ) -> None:
        """Run ``work`` off the GUI thread, then ``on_done(result)`` (or ``on_error(message)``) on it.

        With ``latest_only``, an older request of the same name that finishes
        later is ignored.
        """
        number = next(self._numbers)
        if latest_only:
            self._wanted[name] = number
        self._handlers[(name, number)] = (on_done, on_error)
        self._pool.start(_Job(name, number, work, self._relay))

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the queued work is done (tests, screenshots and shutdown)."""
        return self._pool.waitForDone(msecs)

    def _take(self, name: str, number: int) -> tuple[Callable[[Any], None], Callable[[str], None] | None] | None:
        handlers = self._handlers.pop((name, number), None)
        if handlers is None:
            return None
        wanted = self._wanted.get(name)
        if wanted is not None and wanted != number:
            return None
        return handlers

    def _on_done(self, name: str, number: int, result: object) -> None:
        handlers = self._take(name, number)
        if handlers is not None:
            handlers[0](result)

    def _on_failed(self, name: str, number: int, message: str) -> None:
        handlers = self._take(name, number)
        if handlers is not None and handlers[1] is not None:
            handlers[1](message)
