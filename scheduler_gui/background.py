"""Work off the GUI thread, with only the newest answer delivered back on it.

Views ask questions faster than some answers can be computed (a preview of
many rows, the what-if of a long outage, the words of the summary). A
:class:`LatestOnly` runs one question at a time on a private worker thread and
numbers every request; an answer to a request older than the newest one is
dropped, and a request that is already stale when its turn comes is never
started. Answers cross back to the GUI thread through queued signals, so a
slot never runs on the worker.

A :class:`~core.errors.UserError` is something a person can fix: its message is
delivered as it is. Any other exception is a bug: it is logged with its
traceback and delivered as ``unexpected error: <type>: <message>``, never
swallowed.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from core.errors import UserError

_log = logging.getLogger(__name__)

Describe = Callable[[BaseException], str]
"""Turns an exception raised by the work into the one line :attr:`LatestOnly.failed` carries."""


def describe_exception(exc: BaseException) -> str:
    """A user mistake as its own message; anything else as ``unexpected error: <type>: <message>``."""
    if isinstance(exc, UserError):
        return str(exc)
    detail = str(exc)
    return f"unexpected error: {type(exc).__name__}: {detail}" if detail else f"unexpected error: {type(exc).__name__}"


class Superseded(Exception):
    """Raised by work that notices a newer request has replaced it: it stops, and nothing is delivered."""


class _Relay(QObject):
    done = Signal(int, object)
    failed = Signal(int, str)


class _Job(QRunnable):
    def __init__(self, owner: LatestOnly, number: int, work: Callable[[], object]) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._owner = owner
        self._number = number
        self._work = work
        self._relay = owner._relay
        self._describe = owner._describe

    def run(self) -> None:
        # Reading the newest number from the worker is safe: it is one int, written only by the GUI thread.
        if not self._owner._is_wanted(self._number):
            return
        try:
            result = self._work()
        except Superseded:
            return
        except Exception as exc:
            if not isinstance(exc, UserError):
                _log.error("background work failed", exc_info=exc)
            self._relay.failed.emit(self._number, self._describe(exc))
            return
        self._relay.done.emit(self._number, result)


class LatestOnly(QObject):
    """Runs one piece of work at a time off the GUI thread; only the newest result is delivered.

    ``submit(work)`` returns at once. When the newest request's work returns,
    :attr:`done` carries its result; when it raises, :attr:`failed` carries a
    message. :attr:`busy` is true from a submit until its answer is delivered
    (or it is cancelled); :attr:`busyChanged` is emitted before the answer.
    """

    done = Signal(object)
    """The result of the newest request."""
    failed = Signal(str)
    """Why the newest request failed, in one line."""
    busyChanged = Signal(bool)
    """True when a request is waiting for its answer; false when it was delivered or cancelled."""

    def __init__(self, parent: QObject | None = None, *, describe: Describe = describe_exception) -> None:
        super().__init__(parent)
        self._numbers = itertools.count(1)
        self._wanted = 0
        self._busy = False
        self._describe = describe
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)

    @property
    def busy(self) -> bool:
        return self._busy

    def submit(self, work: Callable[[], object]) -> int:
        """Run ``work`` off the GUI thread; any older request's answer will be dropped. Returns the request number."""
        self._wanted = next(self._numbers)
        self._set_busy(True)
        self._pool.start(_Job(self, self._wanted, work))
        return self._wanted

    def cancel(self) -> None:
        """Forget the pending request: its answer will be dropped (work already running still finishes)."""
        self._wanted = next(self._numbers)
        self._set_busy(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the worker is idle (tests, screenshots, shutdown); False if ``msecs`` ran out first.

        The answer itself arrives through the event loop, after this returns.
        """
        return self._pool.waitForDone(msecs)

    def _is_wanted(self, number: int) -> bool:
        return number == self._wanted

    def _on_done(self, number: int, result: object) -> None:
        if number == self._wanted:
            self._set_busy(False)
            self.done.emit(result)

    def _on_failed(self, number: int, message: str) -> None:
        if number == self._wanted:
            self._set_busy(False)
            self.failed.emit(message)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
