"""The engine commands: engine run and fence, run-now, backfill and reconcile.

These run tasks, or decide what the engine runs next, through ``core.engine``.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from typing import TYPE_CHECKING, Any

from core.cli.arguments import parse_time
from core.cli.common import EXIT_INTERNAL, EXIT_OK, UsageError
from core.cli.ledger_access import command_clock, open_command_ledger
from core.cli.output import err, out, plural, unicode_ok

if TYPE_CHECKING:
    import argparse
    from collections import Counter
    from datetime import datetime

    from core.clock import Clock
    from core.desktop.notify.service_notices import ServiceNotices
    from core.engine.engine import Engine, PassReport
    from core.ledger.db import Ledger

_AFTER = {
    "happened": "a person said it happened",
    "not-happened": "a person said it did not happen; the next engine pass runs it again",
    "abandon": "abandoned by a person",
}


#: glibc's ``M_ARENA_MAX`` option of ``mallopt``.
_M_ARENA_MAX = -8
#: The allocator's arenas an engine's process keeps at most (glibc's default is eight per core).
ENGINE_MALLOC_ARENAS = 2


def fewer_malloc_arenas(arenas: int = ENGINE_MALLOC_ARENAS) -> bool:
    """Let glibc's malloc keep at most ``arenas`` arenas in this process; whether it could.

    Each thread that allocates outside the interpreter's own allocator (SQLite in a
    worker, a spawn's buffers) otherwise gets an arena of its own, whose freed pages stay
    in the process: 1.5 KiB per schedule of peak memory at 1,000 every-minute schedules,
    with no pass slower (docs/benchmarks.md, issue 25). Elsewhere than glibc it does nothing."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


#: Schedules named on a pass line for tasks started, and for each outcome; the rest are counted.
NAMED_SCHEDULES = 5


def pass_summary(report: PassReport, at: datetime) -> str:
    """One line about an engine pass: what it did, and what the engine's tasks started and
    finished since the last line, naming their schedules."""
    from core.time.formats import fmt_utc

    expired = f"expired {report.expired:,}"
    if report.expired_ranges:
        n = report.expired_ranges
        expired += (
            f" (of which a long stretch of missed occurrences recorded as {n:,} expired range{'' if n == 1 else 's'})"
        )
    counts = (
        f"materialized {report.materialized:,}, promoted {report.promoted:,}, {expired}, "
        f"recovered {report.recovered:,}, {_started(report)}, skipped for overlap {report.skipped_overlap:,}"
    )
    if report.orphans:
        n = report.orphans
        counts += f", watched {n:,} task{'' if n == 1 else 's'} still running from an engine that stopped"
    line = f"pass at {fmt_utc(at)}: {counts}; {_finished(report)}"
    held = "".join(
        f"\nschedule {sid} is held: {why}; publish a corrected revision" for sid, why in sorted(report.held.items())
    )
    waits = "".join(
        f"\nschedule {sid} waits for another engine: {why}"
        for sid, why in sorted(report.refused.items())
        if sid not in report.held
    )
    return line + held + waits


def after_last_pass(report: PassReport) -> str | None:
    """What the engine's tasks started and finished after the last pass line (as it stops), or None."""
    if not (report.started or report.outcomes):
        return None
    return f"after the last pass: {_started(report)}; {_finished(report)}"


def _empty_report() -> PassReport:
    from core.engine.context import PassReport as Report

    return Report()


def _started(report: PassReport) -> str:
    """``started 3 (backup 2, report)``."""
    return f"started {report.started:,}" + (f" ({_schedules(report.ran)})" if report.ran else "")


def _finished(report: PassReport) -> str:
    """``outcomes: FAILED 1 (report), SUCCEEDED 2 (backup 2)``, or ``nothing finished``."""
    if not report.outcomes:
        return "nothing finished"
    parts = []
    for state, n in sorted(report.outcomes.items()):
        which = report.finished.get(state)
        parts.append(f"{state} {n:,}" + (f" ({_schedules(which)})" if which else ""))
    return "outcomes: " + ", ".join(parts)


def _schedules(counts: Counter[str]) -> str:
    """``backup 2, report``: schedules by name, each with its count when more than one, the
    first NAMED_SCHEDULES of them; the others counted."""
    named = sorted(counts.items())
    shown = ", ".join(sid if n == 1 else f"{sid} {n:,}" for sid, n in named[:NAMED_SCHEDULES])
    more = len(named) - NAMED_SCHEDULES
    return shown + (f" and {more:,} more schedule{'' if more == 1 else 's'}" if more > 0 else "")


def cmd_engine_run(args: argparse.Namespace) -> int:
    """One full pass (--once), or passes until SIGINT or SIGTERM.

    The engine announces itself in the ledger's ``engines`` table, beats while it
    runs and retires when it stops. It refuses to start while another live
    engine dispatches on the same ledger, unless --allow-second.
    """
    from core.desktop.wake.probe import host_backend
    from core.engine.engine import Engine, EngineOptions
    from core.engine.presence import Heartbeat, announce, retire
    from core.ledger.states import EngineKind
    from core.team.placement import Placement

    if args.now is not None and not args.once:
        raise UsageError("--now: only with --once (a running engine follows the real clock)")
    if args.metrics_port is not None and args.once:
        raise UsageError("--metrics-port: only for a running engine (without --once)")
    fewer_malloc_arenas()
    clock = command_clock(args)
    placement = Placement.of(labels=dict(getattr(args, "label", None) or ()), trusts=getattr(args, "trust", None) or ())
    stopping = None if args.once else StopOnSignal().install()
    try:
        with open_command_ledger(args, clock) as ledger:
            engine_id = announce(
                ledger,
                clock,
                EngineKind.HEADLESS,
                exclusive=not getattr(args, "allow_second", False),
                placement=placement,
            )
            beat = Heartbeat(ledger, clock, engine_id).start()
            try:
                # A frozen clock (--now) is a simulation: it wakes no real machine.
                wake = host_backend() if args.now is None else None
                engine = Engine(ledger, clock, EngineOptions(), placement=placement, engine_id=engine_id, wake=wake)
                if stopping is None:
                    report = engine.run_once(wait=True)
                    out(pass_summary(report, clock.now()))
                    return EXIT_OK
                stopping.attach(engine)
                return _run_forever(engine, ledger, clock, args, stopping)
            finally:
                beat.stop()
                retire(ledger, clock, engine_id)
    finally:
        if stopping is not None:
            stopping.uninstall()


class StopOnSignal:
    """SIGINT and SIGTERM for a running engine, caught from before it announces itself (so a
    signal in its first moments is a clean stop, never a kill that leaves its row live).

    The first signal stops claiming; the running tasks end and are recorded. The second ends
    their process groups, records their attempts as killed (invariant 5) and so lets the
    engine exit at once. A signal before the engine exists is kept and acted on when it is
    attached; a second one then interrupts the start-up. The work happens in a thread: a
    signal handler must not wait for a lock its own thread may hold."""

    def __init__(self) -> None:
        self.signals: list[int] = []
        self.engine: Engine | None = None
        self.previous: dict[int, Any] = {}

    def install(self) -> StopOnSignal:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self.on_signal)
        return self

    def uninstall(self) -> None:
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)
        self.previous.clear()

    def on_signal(self, signum: int, _frame: object) -> None:
        self.signals.append(signum)
        if self.engine is None:
            if len(self.signals) > 1:
                raise KeyboardInterrupt  # still starting: nothing runs yet, so stop now
            _say("stopping: the engine stops as soon as it has started (Ctrl-C again stops it now)", 1)
            return
        self._act(len(self.signals))

    def _act(self, count: int) -> None:
        import threading

        engine = self.engine
        assert engine is not None
        if count == 1:
            _say("stopping: no new task starts; running tasks end and are recorded (Ctrl-C again ends them now)", 1)
            threading.Thread(target=engine.stop, name="tidemark-stop", daemon=True).start()
        else:
            _say("schedctl engine run: interrupted: ending the running tasks' process groups", 2)
            threading.Thread(target=engine.interrupt, name="tidemark-interrupt", daemon=True).start()

    def attach(self, engine: Engine) -> None:
        """The engine exists: a signal that came before it stops it now."""
        self.engine = engine
        if self.signals:
            engine.stop()

    @property
    def interrupted(self) -> bool:
        return len(self.signals) > 1


def _run_forever(engine: Engine, ledger: Ledger, clock: Clock, args: argparse.Namespace, stopping: StopOnSignal) -> int:
    server = None
    if args.metrics_port is not None:
        server = _serve_metrics(ledger, clock, args.metrics_port)
    notices = start_notices(args, ledger, clock)

    def on_pass(report: PassReport) -> None:
        busy = (
            report.materialized
            or report.started
            or report.expired
            or report.recovered
            or report.outcomes
            or report.skipped_overlap
        )
        if busy:
            out(pass_summary(report, clock.now()))
            sys.stdout.flush()
        if notices is not None:
            notices.tick()

    try:
        out(f"engine {engine.worker} running on {ledger.where}; stop it with Ctrl-C or SIGTERM")
        sys.stdout.flush()
        engine.run_forever(poll_seconds=args.poll, on_pass=on_pass)
        engine.wait_idle()  # tasks started by the last passes record their outcomes before the engine retires
        after = after_last_pass(engine.activity.tell(_empty_report()))
        if after is not None:
            out(after)
    finally:
        if server is not None:
            server.shutdown()
        if notices is not None:
            notices.close()
    if stopping.interrupted:
        out("engine stopped: interrupted; the tasks it ended are recorded as killed by a signal")
        return EXIT_INTERNAL
    out("engine stopped")
    return EXIT_OK


def start_notices(args: argparse.Namespace, ledger: Ledger, clock: Clock) -> ServiceNotices | None:
    """The desktop notifications of a running engine (:mod:`core.desktop.notify.service_notices`),
    None with ``--no-notify`` or without a session bus (said in one line)."""
    if getattr(args, "no_notify", False):
        return None
    from core.cli.ledger_access import db_url
    from core.desktop.notify.service_notices import start_notices as start
    from core.desktop.service_command import pinned_db

    return start(ledger, clock, pinned_db(db_url(args)))


def _say(line: str, fd: int) -> None:
    """A line from a signal handler (os.write: print may be in use by the code it interrupted)."""
    import os

    with contextlib.suppress(OSError):
        os.write(fd, f"{line}\n".encode())


def _serve_metrics(ledger: Ledger, clock: Clock, port: int) -> Any:
    """Start the Prometheus endpoint (core.engine.metrics) and say where it is."""
    try:
        from core.engine.metrics import serve
    except ModuleNotFoundError as exc:
        if exc.name != "core.engine.metrics":
            raise
        raise UsageError("--metrics-port: this Tidemark has no metrics endpoint") from None
    try:
        server, _thread = serve(ledger, clock, port)
    except OSError as exc:
        raise UsageError(f"--metrics-port: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc})") from None
    out(f"metrics on http://127.0.0.1:{server.server_port}/metrics")
    return server


def cmd_engine_fence(args: argparse.Namespace) -> int:
    """Bump the execution epoch: claims of earlier epochs can no longer record outcomes."""
    from core.engine.admin import fence

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger:
        epoch = fence(ledger, clock, args.note)
    out(f"fenced the ledger: execution epoch is now {epoch}; claims of earlier epochs are void")
    return EXIT_OK


def cmd_run_now(args: argparse.Namespace) -> int:
    """A manual occurrence of the schedule, due at once; prints its id."""
    from core.engine.admin import run_now

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger:
        occurrence_id = run_now(ledger, args.schedule_id, clock, args.note)
    out(occurrence_id)
    return EXIT_OK


def cmd_backfill(args: argparse.Namespace) -> int:
    """Run a past range's occurrences that never ran, as recorded backfill occurrences."""
    from core.clock import FixedClock
    from core.engine.admin import backfill
    from core.ledger.publish import get_schedule
    from core.ledger.queries import list_schedules
    from core.time.formats import fmt_utc
    from core.time.zones import get_zone

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger:
        with ledger.read() as session:
            get_schedule(session, args.schedule_id)
            zone_name = next(s.time_zone for s in list_schedules(session) if s.schedule_id == args.schedule_id)
        zone = get_zone(zone_name)
        if isinstance(clock, FixedClock):
            clock.set(parse_time(args.now, "--now", zone))
        start = parse_time(args.from_, "--from", zone)
        end = parse_time(args.to, "--to", zone)
        result = backfill(ledger, args.schedule_id, start, end, clock, args.note)
    span = f"{fmt_utc(start)} to {fmt_utc(end)}"
    queued = f", made {plural(len(result.queued), 'occurrence')} that had not run due now" if result.queued else ""
    runs = result.created or result.queued
    lines = [
        f"backfill of {args.schedule_id} from {span}: created {plural(len(result.created), 'occurrence')}{queued}"
        + (" (due now; the engine runs them oldest first)" if runs else "")
        + (f"; left {len(result.left):,} alone:" if result.left else "; left none alone")
    ]
    lines.extend(f"  {occurrence_id}: {why}" for occurrence_id, why in result.left)
    out("\n".join(lines))
    return EXIT_OK


def cmd_reconcile(args: argparse.Namespace) -> int:
    """Resolve an UNKNOWN_EFFECT by a person's decision."""
    from core.engine.reconcile import Decision, reconcile

    decision = Decision(args.decision)
    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger:
        done = reconcile(ledger, args.occurrence_id, decision, clock, args.note)
    arrow = "→" if unicode_ok() else "->"
    out(f"{done.occurrence_id}: {done.old.value} {arrow} {done.new.value} ({_AFTER[decision.value]})")
    return EXIT_OK


def _service_outcome(args: argparse.Namespace, result: Any) -> int:
    """Print a service result: its lines, and the command to run by hand when systemd could not be used."""

    if result.ok:
        out("\n".join(result.lines))
        return EXIT_OK
    for line in result.lines:
        err(f"{args.where}: {line}")
    if result.instead:
        out(f"run the engine yourself instead:\n  {result.instead}")
    return EXIT_INTERNAL


def cmd_install_service(args: argparse.Namespace) -> int:
    """Install, enable and start the systemd user service that runs ``schedctl engine run``."""
    from core.cli.common import DB_ENV
    from core.cli.ledger_access import db_url
    from core.desktop.service import install_service, service_problem
    from core.desktop.service_command import pinned_db

    if args.now is not None:
        raise UsageError(
            "--now is not taken here: the service is always enabled and started at once "
            "(as systemctl enable --now does); nothing was installed"
        )
    db, options = db_url(args), team_options(args)
    problem = service_problem(pinned_db(db), options, "--db" if args.db else DB_ENV)
    if problem is not None:
        raise UsageError(f"{problem}; nothing was installed")
    return _service_outcome(args, install_service(db, options=options))


def team_options(args: argparse.Namespace) -> list[str]:
    """``engine run``'s options as given (``--metrics-port``, ``--allow-second``, ``--label``, ``--trust``,
    ``--no-notify``), for a service that runs it."""
    from core.desktop.service import team_options as options

    return options(
        allow_second=bool(getattr(args, "allow_second", False)),
        labels=getattr(args, "label", None) or (),
        trusts=getattr(args, "trust", None) or (),
        metrics_port=getattr(args, "metrics_port", None),
        notify=not getattr(args, "no_notify", False),
    )


def cmd_uninstall_service(args: argparse.Namespace) -> int:
    """Stop, disable and remove the systemd user service."""
    from core.desktop.service import uninstall_service

    return _service_outcome(args, uninstall_service())
