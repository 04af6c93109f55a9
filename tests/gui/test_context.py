"""The window's shared context opens one ledger, whichever threads ask for it first."""

from __future__ import annotations

import threading

from scheduler_gui.context import AppContext

THREADS = 8


def test_threads_asking_for_the_ledger_at_once_share_the_one_it_opens(ctx: AppContext) -> None:
    start = threading.Barrier(THREADS)
    seen: list[object] = []
    failures: list[BaseException] = []

    def ask() -> None:
        try:
            start.wait()
            seen.append(ctx.ledger)
        except BaseException as exc:  # collected: an exception in a thread would go unseen
            failures.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(seen) == THREADS
    assert all(ledger is ctx.ledger for ledger in seen)
    assert ctx.ledger_open
