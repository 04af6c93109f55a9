"""A task that cannot be prepared or started is a recorded spawn error on its own
occurrence, never a dead worker; a worker that dies anyway is restarted, with an
event and a log line. On SQLite and PostgreSQL.

The failures are injected where the command is prepared or spawned, so that
these tests do not depend on what validation lets through."""

from __future__ import annotations

import dataclasses
import errno
import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import commands, runner, spawning, statements
from core.engine import engine as engine_module
from core.engine.admin import run_now
from core.engine.engine import Engine, EngineOptions
from core.engine.runner import PreparedCommand
from core.ledger.db import Ledger
from core.ledger.events import EventKind
from core.ledger.models import Attempt, Event, Occurrence
from core.ledger.publish import publish

from . import spec

SID = "daily-ops-summary"
PRINT_OK = {"argv": [sys.executable, "-c", "print('ok')"], "effect": "non_idempotent"}


def two_runs_now(ledger: Ledger, clock: FixedClock, **overrides: Any) -> list[str]:
    """The schedule published with one try per run, and two manual runs of it due now."""
    with ledger.write() as session:
        publish(session, spec(task=PRINT_OK, retry={"maxAttempts": 1}, **overrides), clock)
    return [run_now(ledger, SID, clock), run_now(ledger, SID, clock)]


def first_call_only(original: Callable[..., Any], broken: Callable[..., Any]) -> Callable[..., Any]:
    calls: list[int] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return broken(*args, **kwargs) if len(calls) == 1 else original(*args, **kwargs)

    return call


def prepared_with(change: Callable[[PreparedCommand], PreparedCommand]) -> Callable[..., PreparedCommand]:
    """The claim's command, its result changed: a value the operating system cannot pass reaches the spawn."""
    real = commands.prepared

    def call(*args: Any, **kwargs: Any) -> PreparedCommand:
        return change(real(*args, **kwargs))

    return call


def raising(exc: BaseException) -> Callable[..., Any]:
    def call(*_args: Any, **_kwargs: Any) -> Any:
        raise exc

    return call


def _surrogate_prepare(task: Any, identity: Any, base_env: Any) -> PreparedCommand:
    argv = [*task.argv, "\udcff"]
    return runner.prepare(argv, task.cwd, task.env, identity, base_env)  # the digest cannot encode it


#: (where the failure is injected, the replacement, words the attempt's stderr tail holds)
SPAWN_FAILURES = [
    pytest.param(
        "prepare",
        prepared_with(lambda c: dataclasses.replace(c, argv=[*c.argv, "a\0b"])),
        "embedded null byte",
        id="nul_in_argv",
    ),
    pytest.param(
        "prepare",
        prepared_with(lambda c: dataclasses.replace(c, env=c.env | {"DOOR": "a\0b"})),
        "embedded null byte",
        id="nul_in_env_value",
    ),
    pytest.param(
        "prepare",
        prepared_with(lambda c: dataclasses.replace(c, argv=[*c.argv, "\ud800"])),
        "UnicodeEncodeError",
        id="surrogate_in_argv",
    ),
    pytest.param("prepare", _surrogate_prepare, "UnicodeEncodeError", id="digest_cannot_encode"),
    pytest.param("prepare", raising(RuntimeError("boom")), "RuntimeError: boom", id="prepare_raises"),
    pytest.param(
        "Popen", raising(OSError(errno.EMFILE, "Too many open files")), "Too many open files", id="popen_oserror"
    ),
    pytest.param("Popen", raising(ValueError("bad value")), "bad value", id="popen_valueerror"),
    pytest.param(
        "Popen",
        raising(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")),
        "surrogates not allowed",
        id="popen_unicodeerror",
    ),
    pytest.param(
        "Popen", raising(RuntimeError("can't start new thread")), "can't start new thread", id="popen_runtimeerror"
    ),
]


@pytest.mark.parametrize(("where", "broken", "words"), SPAWN_FAILURES)
def test_a_task_that_cannot_start_is_a_spawn_error_and_the_next_one_runs(
    ledger: Ledger,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    broken: Callable[..., Any],
    words: str,
) -> None:
    ids = two_runs_now(ledger, clock)
    if where == "prepare":
        monkeypatch.setattr(commands, "prepared", first_call_only(commands.prepared, broken))
    else:  # whichever way the runner starts the task (posix_spawn here, Popen elsewhere)
        monkeypatch.setattr(spawning.subprocess, "Popen", first_call_only(spawning.subprocess.Popen, broken))
        if spawning.posix_spawn is not None:
            monkeypatch.setattr(spawning, "posix_spawn", first_call_only(spawning.posix_spawn, broken))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    report = engine.run_once()
    assert report.outcomes == {"FAILED": 1, "SUCCEEDED": 1}
    with ledger.read() as session:
        occs = {
            o.occurrence_id: o for o in session.scalars(select(Occurrence).where(Occurrence.occurrence_id.in_(ids)))
        }
        tries = {a.occurrence_id: a for a in session.scalars(select(Attempt))}
    [failed] = [i for i in ids if occs[i].state.value == "FAILED"]
    [ran] = [i for i in ids if i != failed]
    assert occs[ran].state.value == "SUCCEEDED" and tries[ran].stdout_tail == "ok\n"
    attempt = tries[failed]
    assert (attempt.error_class, attempt.exit_status, attempt.outcome) == ("spawn_error", None, occs[failed].state)
    assert attempt.finished_at is not None
    assert words in (attempt.stderr_tail or ""), attempt.stderr_tail
    assert "\0" not in (attempt.stderr_tail or "")
    assert "could not be started" in (occs[failed].reason or "")
    assert engine.wait_idle(timeout=30)
    assert not engine.context.mine  # nothing left that recovery would skip


def test_a_spawn_error_retries_like_a_clean_failure(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never UNKNOWN_EFFECT: the task never started, so its outcome is known."""
    with ledger.write() as session:
        publish(session, spec(task=PRINT_OK), clock)
    occurrence_id = run_now(ledger, SID, clock)
    monkeypatch.setattr(commands, "prepared", prepared_with(lambda c: dataclasses.replace(c, argv=["x\0"])))
    Engine(ledger, clock).run_once()
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        assert occ is not None and occ.state.value == "RETRY_WAIT"
        [attempt] = session.scalars(select(Attempt)).all()
    assert attempt.error_class == "spawn_error"


def worker_deaths(ledger: Ledger) -> list[Event]:
    with ledger.read() as session:
        kind = EventKind.ENGINE_WORKER_DIED.value
        return list(session.scalars(select(Event).where(Event.kind == kind).order_by(Event.id)))


def test_a_worker_killed_by_an_exception_is_restarted_with_an_event_and_a_log_line(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ids = two_runs_now(ledger, clock)
    finish = statements.finish_attempt
    monkeypatch.setattr(statements, "finish_attempt", first_call_only(finish, raising(RuntimeError("disk on fire"))))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    with caplog.at_level(logging.ERROR, logger="core.engine.engine"):
        report = engine.run_once()
    assert report.outcomes == {"SUCCEEDED": 2}
    with ledger.read() as session:
        assert {
            o.state.value for o in session.scalars(select(Occurrence).where(Occurrence.occurrence_id.in_(ids)))
        } == {"SUCCEEDED"}
        assert [a.error_class for a in session.scalars(select(Attempt))] == [None, None]
    [death] = worker_deaths(ledger)
    assert death.schedule_id == SID and death.occurrence_id in ids
    assert death.data["error"] == "RuntimeError: disk on fire"
    assert death.data["restarted"] is True
    [line] = [r for r in caplog.records if "died" in r.getMessage()]
    assert SID in line.getMessage() and "disk on fire" in line.getMessage() and "restarted" in line.getMessage()
    assert not engine.context.mine


def test_a_worker_that_keeps_dying_gives_up_until_the_next_pass(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each death is recorded; the pass still returns, and the claim is left to recovery
    (it is no longer this engine's, so a later pass settles it once its lease expires)."""
    ids = two_runs_now(ledger, clock)
    monkeypatch.setattr(statements, "finish_attempt", raising(RuntimeError("always")))
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    engine.run_once()
    deaths = worker_deaths(ledger)
    assert [d.data["restarted"] for d in deaths] == [True] * engine_module.WORKER_RESTARTS + [False]
    assert not engine.context.mine
    monkeypatch.undo()
    with ledger.read() as session:
        stuck = [
            o
            for o in session.scalars(select(Occurrence))
            if o.occurrence_id in ids and o.state.value in ("DISPATCHING", "RUNNING")
        ]
    assert len(stuck) == 1
