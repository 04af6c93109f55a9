"""Every thread of the window and its engine can use a SQLite ledger at once
(core.ledger.db): found by bench/window_stress.py, where the views' readers, the
engine's workers (each holding its connection) and a run-now from another thread
outgrew a pool of 15 and a pass failed on "QueuePool limit reached"."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from sqlalchemy import text

from core.engine.engine import EngineOptions
from core.ledger.db import open_ledger

#: More threads than a window runs: four engine workers holding their connection, the
#: engine's loop, lease keeper and heartbeat, a reader per monitor view, and a run-now.
THREADS = 40


def test_forty_threads_read_and_write_a_sqlite_ledger_at_once(tmp_path: Path) -> None:
    ledger = open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    assert EngineOptions().max_workers < THREADS
    all_in = threading.Barrier(THREADS, timeout=20)
    problems: list[BaseException] = []

    def reader() -> None:
        try:
            with ledger.read() as session:
                session.execute(text("SELECT count(*) FROM occurrences")).scalar()
                all_in.wait()  # every thread holds its session at the same moment
        except BaseException as exc:
            problems.append(exc)
            all_in.abort()

    with contextlib.ExitStack() as stack:
        stack.callback(ledger.close)
        writers = [stack.enter_context(ledger.writer()) for _ in range(EngineOptions().max_workers)]
        threads = [threading.Thread(target=reader) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        with writers[0]() as session:
            session.execute(text("SELECT 1"))
    assert problems == []
