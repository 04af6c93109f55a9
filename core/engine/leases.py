"""One thread per engine that keeps its running claims alive.

While a task runs, two things must reach the ledger: that the process is
running (DISPATCHING -> RUNNING), and a renewed lease, so that no other engine
takes the occurrence for lost. Doing both from the worker that waits on the
process would cost a write transaction per task before it even starts; most
tasks end within moments. So the worker only tells :class:`LeaseKeeper` that a
process started, and the keeper marks it RUNNING once it has run for
``running_after`` and renews its lease every ``renew_every``. A task that ends
sooner gets its RUNNING event written with its outcome, in one transaction.

The keeper holds no ledger logic: the engine hands it the two write callbacks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Tracked(Generic[T]):
    """A claim whose process runs, and when (monotonic seconds) things were last done for it."""

    claim: T
    started: float
    renewed: float
    marked: bool = False


class LeaseKeeper(Generic[T]):
    """Marks running claims RUNNING and renews their leases, from one background thread.

    ``mark(claims)`` moves them to RUNNING where they still are DISPATCHING
    under the same claim (a claim that ended or was superseded meanwhile is
    left alone); ``renew(claims)`` extends their leases. Both run outside the
    keeper's lock, so a worker is never held up by the ledger. A callback that
    fails (a locked database) is tried again on the next round.
    """

    def __init__(
        self,
        mark: Callable[[Sequence[T]], None],
        renew: Callable[[Sequence[T]], None],
        *,
        running_after: float,
        renew_every: float,
        key: Callable[[T], str],
        idle_exit: float = 5.0,
    ) -> None:
        self._mark = mark
        self._renew = renew
        self._running_after = running_after
        self._renew_every = renew_every
        self._key = key
        self._idle_exit = idle_exit
        self._tracked: dict[str, Tracked[T]] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._wake_at = 0.0  # when the thread wakes next (monotonic)

    def track(self, claim: T) -> None:
        """The claim's process has started."""
        now = time.monotonic()
        with self._cond:
            self._tracked[self._key(claim)] = Tracked(claim, now, now)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tidemark-leases", daemon=True)
                self._thread.start()
            elif self._wake_at > now + self._running_after:
                self._cond.notify()  # it sleeps past this claim's first deadline

    def forget(self, claim: T) -> None:
        """The claim's process has ended (its outcome is recorded next)."""
        with self._cond:
            self._tracked.pop(self._key(claim), None)

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._tracked:
                    # Linger a while: a worker running short tasks back to back would
                    # otherwise start a thread for each.
                    self._wake_at = time.monotonic() + self._idle_exit
                    self._cond.wait(self._idle_exit)
                    if not self._tracked:
                        self._thread = None
                        return
                now = time.monotonic()
                to_mark = [t for t in self._tracked.values() if not t.marked and now - t.started >= self._running_after]
                to_renew = [t for t in self._tracked.values() if now - t.renewed >= self._renew_every]
            if to_mark and self._try(self._mark, to_mark):
                for t in to_mark:
                    t.marked = True
            if to_renew:
                self._try(self._renew, to_renew)
                renewed = time.monotonic()  # after a failure too: the next try waits a round
                for t in to_renew:
                    t.renewed = renewed
            with self._cond:
                if not self._tracked:
                    continue
                now = time.monotonic()
                wake = min(
                    min(t.renewed + self._renew_every for t in self._tracked.values()),
                    min(
                        (t.started + self._running_after for t in self._tracked.values() if not t.marked),
                        default=float("inf"),
                    ),
                )
                if wake > now:
                    self._wake_at = wake
                    self._cond.wait(wake - now)

    def _try(self, call: Callable[[Sequence[T]], None], tracked: list[Tracked[T]]) -> bool:
        try:
            call([t.claim for t in tracked])
        except Exception:  # the ledger was busy or gone: try again next round
            now = time.monotonic()
            for t in tracked:
                t.started = now  # a failed mark waits running_after again
            return False
        return True
