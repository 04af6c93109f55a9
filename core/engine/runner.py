"""Running a task's command: no shell, its own process group, a timeout that
kills the whole group, bounded output tails, and the occurrence's identity in
the environment and in argv placeholders (docs/contract.md §4, invariants 4 and 9).

The runner knows nothing of the ledger: it turns a prepared command into a
:class:`RunResult`, and the engine decides what the result means.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.clock import Clock
from core.desktop.service_command import DB_VARIABLE
from core.engine import processes, spawning
from core.engine.output_keep import OutputKeeper
from core.engine.tails import Tail
from core.spec.model import SecretRef
from core.team.secrets import reference_name, resolve

#: Bytes of stdout and of stderr kept per attempt (the rest is counted, not stored).
TAIL_BYTES = 8192
#: After SIGTERM, how long the group gets before SIGKILL.
KILL_GRACE_SECONDS = 2.0
#: After the main process exits, how long to wait for its output to drain.
DRAIN_SECONDS = 1.0

PLACEHOLDERS = ("occurrenceId", "period", "nominalLocal", "scheduledUtc")

#: The engine's own variables, which a task does not inherit: the ledger's URL (a PostgreSQL
#: password with it) and libpq's password. A task that needs one names it in ``task.env``.
ENGINE_ONLY = frozenset({DB_VARIABLE, "PGPASSWORD"})


@dataclass(frozen=True)
class TaskIdentity:
    """Who an execution is for; handed to the task as SCHED_* variables."""

    schedule_id: str
    revision: int
    occurrence_id: str
    logical_slot_id: str | None
    nominal_local: str
    scheduled_utc: str | None
    business_period: str | None
    attempt_id: str
    attempt_number: int

    def environment(self) -> dict[str, str]:
        return {
            "SCHED_SCHEDULE_ID": self.schedule_id,
            "SCHED_REVISION": str(self.revision),
            "SCHED_OCCURRENCE_ID": self.occurrence_id,
            "SCHED_LOGICAL_SLOT_ID": self.logical_slot_id or "",
            "SCHED_NOMINAL_LOCAL": self.nominal_local,
            "SCHED_SCHEDULED_UTC": self.scheduled_utc or "",
            "SCHED_BUSINESS_PERIOD": self.business_period or "",
            "SCHED_ATTEMPT_ID": self.attempt_id,
            "SCHED_ATTEMPT_NUMBER": str(self.attempt_number),
        }

    def placeholders(self) -> dict[str, str]:
        return {
            "occurrenceId": self.occurrence_id,
            "period": self.business_period or "",
            "nominalLocal": self.nominal_local,
            "scheduledUtc": self.scheduled_utc or "",
        }


_PER_ATTEMPT = ("SCHED_ATTEMPT_ID", "SCHED_ATTEMPT_NUMBER")
IDENTITY_NAMES = frozenset(TaskIdentity("", 0, "", None, "", None, None, "", 0).environment())
#: The identity's variables that go into a command's digest, in its order (all but the per-attempt two).
DIGESTED_NAMES = tuple(sorted(IDENTITY_NAMES.difference(_PER_ATTEMPT)))


@dataclass(frozen=True)
class PreparedCommand:
    """A command ready to start. ``env`` is the child's whole environment."""

    argv: list[str]
    cwd: str | None
    env: dict[str, str] = field(repr=False)  # values (secrets among them) stay out of any repr in a log
    digest: str
    env_names: tuple[str, ...]  # the task's own variables, by name only (values stay out of records)
    #: The values of the task's secrets, masked in its output as it arrives (:class:`core.engine.tails.Tail`).
    secrets: tuple[str, ...] = field(default=(), repr=False)


PLACEHOLDER = re.compile("{(" + "|".join(PLACEHOLDERS) + ")}")


def render_argv(argv: list[str], identity: TaskIdentity) -> list[str]:
    """Fill ``{occurrenceId} {period} {nominalLocal} {scheduledUtc}`` in one pass: a value
    that holds a placeholder's name is not filled in again. Other braces stay as written."""
    values = identity.placeholders()
    return [PLACEHOLDER.sub(lambda m: values[m[1]], arg) for arg in argv]


def input_digest(
    argv: list[str],
    cwd: str | None,
    env: Mapping[str, str],
    task_names: tuple[str, ...] = (),
    references: Mapping[str, str] | None = None,
) -> str:
    """sha256 over the rendered argv, the cwd, the identity variables, the names of the task's own
    variables and which of them are secrets (variable -> secret name, never a value).

    The task's variable values stay out: a digest printed by ``attempts`` must
    not let anyone try candidate values (a four-digit PIN falls in a second).
    Those values live only in the revision, and ``SCHED_SCHEDULE_ID`` and
    ``SCHED_REVISION`` are in the digest, so a changed value (a new revision)
    still changes it. The per-attempt variables are left out, so attempts of
    one occurrence with the same inputs share a digest.
    """
    hidden = set(task_names) - IDENTITY_NAMES  # the identity's values win over a task's (see prepare)
    stable = {k: v for k, v in sorted(env.items()) if k not in _PER_ATTEMPT and k not in hidden}
    names = sorted(hidden)
    inputs: dict[str, object] = {"argv": argv, "cwd": cwd, "env": stable, "envNames": names}
    if references:
        inputs["envSecrets"] = dict(sorted(references.items()))
    return hashlib.sha256(compact_json(inputs).encode("utf-8")).hexdigest()


#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, its encoder made once, not per call.
compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def prepare(
    argv: list[str],
    cwd: str | None,
    task_env: Mapping[str, str | SecretRef],
    identity: TaskIdentity,
    base_env: Mapping[str, str] | None = None,
) -> PreparedCommand:
    """Render a task for one attempt. ``base_env`` defaults to this process's environment,
    less the engine's own variables (:data:`ENGINE_ONLY`); the task's own ``env`` wins over it.

    A ``{secret: NAME}`` value is looked up on this host now (:func:`core.team.secrets.resolve`);
    a secret that is not there raises :class:`core.team.secrets.SecretError`, naming it."""
    rendered = render_argv(argv, identity)
    values, secrets = resolve(task_env)
    references = {var: name for var, value in task_env.items() if (name := reference_name(value)) is not None}
    own = values | identity.environment()
    inherited = os.environ if base_env is None else base_env
    env = dict(inherited)  # copied whole and the engine's own taken out: cheaper than a filter of every name
    for name in ENGINE_ONLY:
        env.pop(name, None)
    env.update(own)
    names = tuple(sorted(task_env))
    digest = input_digest(rendered, cwd, own, names, references)
    return PreparedCommand(rendered, cwd, env, digest, names, secrets)


def printable(text: str, limit: int = 200) -> str:
    """``text`` fit for a record and a terminal: control characters, NUL and lone
    surrogates escaped, at most ``limit`` characters."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    safe = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in safe)
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def describe_error(exc: BaseException) -> str:
    """An exception in one printable line: the system's words for an OSError, else its class and message."""
    if isinstance(exc, OSError) and exc.strerror:
        return printable(exc.strerror)
    try:
        message = str(exc)
    except Exception:  # an exception whose text cannot be made
        message = ""
    return printable(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


@dataclass(frozen=True)
class RunResult:
    """How one execution ended."""

    started: datetime
    finished: datetime
    exit_status: int | None  # the process's own exit code; None when it did not exit by itself
    signal: int | None  # the signal that ended it, when one did
    error_class: str | None  # None, "timeout", "signal", "spawn_error", "lost"
    stdout_tail: str
    stderr_tail: str
    pid: int | None = None

    @property
    def succeeded(self) -> bool:
        return self.exit_status == 0 and self.error_class is None

    @property
    def clean_failure(self) -> bool:
        """It ended on its own with a non-zero status, or never started: the outcome is known."""
        return self.error_class == "spawn_error" or (self.error_class is None and self.exit_status not in (None, 0))

    @property
    def outcome_lost(self) -> bool:
        """Killed by a timeout or a signal, or lost track of: whatever it did before is unknown."""
        return self.error_class in ("timeout", "signal", "lost")


def _wait_group_gone(pgid: int, limit: float) -> None:
    """Wait (at most ``limit`` seconds) until no process of the group is left but zombies."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if spawning.only_zombies(pgid):
            return
        time.sleep(0.005)


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tell_started(child: spawning.Child, on_started: Callable[[int], None]) -> None:
    """``on_started(pid)``; if it fails, the task's group is killed and reaped before the error goes on."""
    try:
        on_started(child.pid)
    except BaseException:
        _kill_group(child.pid, signal.SIGKILL)
        child.wait()
        raise


#: The start time of each task :func:`run_command` is running, where the clock around its spawn said it.
_STARTS: dict[int, float] = {}


def measured_start(pid: int) -> float | None:
    """When the task ``pid`` that :func:`run_command` runs now started, as the clock read around its
    spawn says (:func:`core.engine.processes.start_between`: no file read); None when that could
    not tell, or ``pid`` is no task of its."""
    return _STARTS.get(pid)


def run_command(
    command: PreparedCommand,
    timeout: timedelta,
    clock: Clock,
    *,
    tail_bytes: int = TAIL_BYTES,
    on_started: Callable[[int], None] | None = None,
    keeper: OutputKeeper | None = None,
) -> RunResult:
    """Run ``command`` to its end (or its timeout) and describe how it ended.

    The process gets its own session, so a timeout kills everything it
    started (SIGTERM to the group, SIGKILL after a grace period). One loop in
    the calling thread reads both pipes and notices the exit (a pidfd where
    the system has one), so a short task costs little more than its spawn
    (:func:`core.engine.spawning.spawn`: ``posix_spawn`` where it can express the task).
    The command's secrets are masked in both tails. ``keeper`` keeps the tails
    on disk as they grow, so that they outlive a crash of the engine.

    ``on_started(pid)`` is told the task's pid as soon as it runs (an error from it ends the
    task's group and goes on); meanwhile :func:`measured_start` says when the task started.
    """
    started = clock.now()
    try:
        before = processes.boot_clock()
        child, stdout, stderr = spawning.spawn(command)
        began = processes.start_between(before, processes.boot_clock())
    except Exception as exc:  # OSError; ValueError for a NUL byte or a character the system cannot encode; any other
        program = printable(command.argv[0]) if command.argv else "the task"
        why = f"cannot start {program}: {describe_error(exc)}"
        return RunResult(started, clock.now(), None, None, "spawn_error", "", why)
    out, err = Tail(tail_bytes, command.secrets), Tail(tail_bytes, command.secrets)
    if began is not None:
        _STARTS[child.pid] = began
    try:
        if on_started is not None:
            _tell_started(child, on_started)
        grew = (lambda: keeper.keep(out.so_far(), err.so_far())) if keeper is not None else None
        timed_out = _collect(child, {stdout: out, stderr: err}, timeout, grew)
    finally:
        _STARTS.pop(child.pid, None)
        for fd in (stdout, stderr):
            with contextlib.suppress(OSError):
                os.close(fd)
    finished = clock.now()
    code = child.returncode
    assert code is not None
    if timed_out:
        return RunResult(
            started, finished, None, -code if code and code < 0 else None, "timeout", out.text(), err.text(), child.pid
        )
    if code < 0:
        return RunResult(started, finished, None, -code, "signal", out.text(), err.text(), child.pid)
    return RunResult(started, finished, code, None, None, out.text(), err.text(), child.pid)


#: How long a task's exit alone is waited for before its output is read as it comes: a short task
#: then wakes the engine once (its exit), not once for each pipe it closes as it ends and once more
#: for the exit. A task that fills a pipe meanwhile waits at most this long to go on.
FIRST_WAIT_SECONDS = 0.005


def _ended_soon(pidfd: int, seconds: float) -> bool:
    """Whether the process of ``pidfd`` exits within ``seconds`` (its output left unread meanwhile)."""
    alone = select.poll()  # not select.select: a descriptor past 1023 is fine
    alone.register(pidfd, select.POLLIN)
    return bool(alone.poll(math.ceil(max(seconds, 0.0) * 1000)))


def _collect(
    proc: spawning.Child, tails: dict[int, Tail], timeout: timedelta, grew: Callable[[], float | None] | None = None
) -> bool:
    """Read the pipes into their tails until the process has exited and its output
    is drained (at most DRAIN_SECONDS after the exit: a grandchild may hold a pipe).
    Applies the timeout; returns whether it struck. The process is reaped on return."""
    pidfd = spawning.open_pidfd(proc.pid)
    poller = select.poll()  # one system call per wait, nothing to set up or tear down
    watched = set(tails)
    for fd in tails:
        poller.register(fd, select.POLLIN)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
        watched.add(pidfd)
    try:
        deadline = time.monotonic() + max(timeout.total_seconds(), 0.001)
        kill_at: float | None = None  # SIGKILL time after a SIGTERM
        drained_by: float | None = None  # set once the process has exited
        if pidfd is not None and _ended_soon(pidfd, min(timeout.total_seconds(), FIRST_WAIT_SECONDS)):
            poller.unregister(pidfd)
            watched.discard(pidfd)
            proc.wait()
            drained_by = time.monotonic() + DRAIN_SECONDS
        timed_out = False
        keep_at: float | None = None  # when output that came too soon after the last keeping is kept
        while True:
            now = time.monotonic()
            if keep_at is not None and now >= keep_at and grew is not None:
                keep_at = grew()
            if drained_by is None and (pidfd is None or not tails) and proc.poll() is not None:
                if timed_out:
                    _kill_group(proc.pid, signal.SIGKILL)
                drained_by = now + DRAIN_SECONDS
            if drained_by is not None and (not tails or now >= drained_by):
                break
            if drained_by is None and now >= deadline and not timed_out:
                timed_out = True
                _kill_group(proc.pid, signal.SIGTERM)
                kill_at = now + KILL_GRACE_SECONDS
            if kill_at is not None and now >= kill_at:
                _kill_group(proc.pid, signal.SIGKILL)
                kill_at = None
            wake = [t for t in (drained_by, kill_at, None if timed_out else deadline, keep_at) if t is not None]
            wait = max(0.0, min(wake) - now) if wake else None
            if pidfd is None and drained_by is None:
                wait = 0.05 if wait is None else min(wait, 0.05)  # no exit notification: poll for it
            if not watched:
                # Nothing left to read and no pidfd: wait for the exit itself.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=wait)
                continue
            for fd, _mask in poller.poll(None if wait is None else math.ceil(wait * 1000)):
                if fd == pidfd:
                    poller.unregister(fd)
                    watched.discard(fd)
                    proc.wait()
                    if timed_out:
                        # Children that ignored SIGTERM must not outlive the attempt either
                        # (their end closes the pipes, which the drain below waits for).
                        _kill_group(proc.pid, signal.SIGKILL)
                    drained_by = time.monotonic() + DRAIN_SECONDS
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if chunk:
                    tails[fd].add(chunk)
                    if grew is not None:
                        keep_at = grew()
                else:
                    poller.unregister(fd)
                    watched.discard(fd)
                    del tails[fd]
        if timed_out:
            # Children that ignored SIGTERM must not outlive the attempt either.
            _kill_group(proc.pid, signal.SIGKILL)
            _wait_group_gone(proc.pid, KILL_GRACE_SECONDS)
        proc.wait()
        return timed_out
    finally:
        if pidfd is not None:
            os.close(pidfd)
