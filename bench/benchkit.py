"""Pieces the engine benchmarks share: a runner stand-in that succeeds at once,
an engine that adds up the seconds spent in each of its stages, and a scratch
ledger database on either backend."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from core.clock import Clock
from core.engine.engine import Engine
from core.engine.runner import PreparedCommand, RunResult


def interval_spec(schedule_id: str, due: int, argv: list[str], **more: Any) -> Any:
    """An interval schedule every minute from 2026-03-02 00:00 UTC whose ``due`` first
    occurrences are no misfire when run late (every due row runs)."""
    from core.spec.validation import parse_spec

    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "UTC",
            "kind": "interval",
            "every": "PT1M",
            "anchor": "2026-03-02T00:00:00Z",
            "cutoverAt": "2026-03-02T00:00:00Z",
            "latenessWindow": f"PT{due + 10}M",
            "horizon": "PT1H",
            "task": {"argv": argv, "effect": "idempotent", "timeout": "PT1M"},
            **more,
        }
    )


def instant_success(
    command: PreparedCommand,
    timeout: timedelta,
    clock: Clock,
    *,
    tail_bytes: int = 0,
    on_started: Callable[[int], None] | None = None,
    keeper: object = None,
) -> RunResult:
    """The runner's contract without a process: started, exited 0 (it prints nothing, so
    ``keeper`` keeps nothing)."""
    started = clock.now()
    if on_started is not None:
        on_started(0)
    return RunResult(started, clock.now(), 0, None, None, "", "", 0)


class TimingEngine(Engine):
    """The engine; :meth:`timing` adds up the seconds spent in the stages it names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spent: dict[str, float] = {}
        #: The process's CPU seconds (all threads) in each stage.
        self.cpu: dict[str, float] = {}

    def _timed(self, name: str, call: Callable[[], Any]) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return call()
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - start
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - cpu

    @contextmanager
    def timing(self, stages: dict[str, tuple[object, str]]) -> Iterator[None]:
        """While the block runs, each stage function (a module and its function's name)
        is timed under its step's name. The engine calls stages through their
        modules, so a stand-in there is what it calls."""
        with ExitStack() as stack:
            for name, (module, function) in stages.items():
                real = getattr(module, function)

                def timed(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
                    return self._timed(_name, lambda: _real(*args, **kwargs))

                stack.enter_context(mock.patch.object(module, function, timed))
            yield


@contextmanager
def scratch_database(backend: str, pg: str, tmp: Path) -> Iterator[str]:
    """The URL of an empty ledger database, dropped at the end: a SQLite file in ``tmp``, or a new
    database on the PostgreSQL server ``pg``."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp / 'ledger.db'}"
        return
    from sqlalchemy import create_engine, make_url, text

    name = f"tidemark_bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pg, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield make_url(pg).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def server_cpu(url: str) -> float | None:
    """CPU seconds (user and system) that the PostgreSQL server's backends now connected to
    ``url``'s database have used, read from /proc (None: not a PostgreSQL database on this
    machine, or no backend found). A backend's process title names its database."""
    from sqlalchemy import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql" or not Path("/proc").is_dir():
        return None
    wanted = f" {parsed.database} "
    ticks = os.sysconf("SC_CLK_TCK")
    total, found = 0.0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if not title.startswith("postgres:") or wanted not in title:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
        found = True
    return total if found else None
