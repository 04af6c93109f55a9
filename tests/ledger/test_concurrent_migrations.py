"""Threads of one process that open (and so migrate) ledgers at the same moment.

The window opens its ledger on first use from whichever thread asks first, and
a test or a tool may open several: Alembic's migration context is global to the
process, so migrations are serialized in core.ledger.db.
"""

from __future__ import annotations

import threading
from pathlib import Path

from core.clock import FixedClock
from core.ledger.db import head_revision, open_ledger, schema_revision

from . import NOW

THREADS = 8


def test_threads_migrating_new_ledgers_at_once_each_get_a_whole_schema(tmp_path: Path) -> None:
    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []
    revisions: list[str] = []

    def open_one(n: int) -> None:
        try:
            start.wait()
            ledger = open_ledger(str(tmp_path / f"ledger-{n}.db"), FixedClock(NOW))
            with ledger, ledger.engine.connect() as connection:
                revisions.append(schema_revision(connection))
        except BaseException as exc:  # collected: an exception in a thread would go unseen
            failures.append(exc)

    for _ in range(3):
        threads = [threading.Thread(target=open_one, args=(n,)) for n in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tmp_path = tmp_path / "again"
        tmp_path.mkdir()
    assert failures == []
    assert revisions == [head_revision()] * (3 * THREADS)
