"""``schedctl``: Tidemark's command line (CONTRACT §5).

Exit status: 0 success, 2 invalid input (one line on stderr per problem, naming
the key or option), 1 anything else (an internal error, reported with its
traceback on stderr).

Only the standard library is imported at module level; each command imports
the core (pydantic, dateutil, PyYAML, icalendar) when it runs, so that
``schedctl --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import textwrap
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from core.clock import Clock, FixedClock, SystemClock
    from core.engine.engine import Engine, PassReport
    from core.errors import UserError
    from core.ledger.db import Ledger
    from core.spec import ScheduleSpec

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
DEFAULT_COUNT = 10
#: The environment variable naming the ledger when --db is not given.
DB_ENV = "SCHEDULER_DB_URL"
#: Seconds to wait for another program's lock on a SQLite ledger before giving up.
LOCK_WAIT_SECONDS = 5.0
#: Occurrences read per query when ``ledger`` lists without --limit.
_PAGE = 1000

_TIME_HELP = """\
Times (--from, --until, --now) are either an instant with Z or an offset
(2026-03-08T07:00:00Z, 2026-03-08T02:00:00-05:00), or a local date-time or
date (2026-03-08T02:30, 2026-03-08) read on the wall clock of the schedule's
timeZone. A local time that happens twice means its first reading; one that
does not exist (clocks jump over it) means the moment the clocks jump.
"""
_LEDGER_TIME_HELP = (
    "Times (--now, --from, --to) are an instant with Z or an offset (2026-03-08T07:00:00Z), or a local "
    "date-time or date (2026-03-08T02:30, 2026-03-08) read on the wall clock of the schedule the command is "
    "about (apply: the spec's timeZone; backfill: the schedule's), else in UTC. The ledger is --db, else "
    f"${DB_ENV}, else ledger.db in your data directory."
)
_DATE_FORM = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$", re.I)
_INSTANT_SUFFIX = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.IGNORECASE)


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr instead of usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


# --- argument types -------------------------------------------------------------------


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.05 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be between 0.05 and 3600 seconds, got {text}")
    return value


def _time_text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a date-time such as 2026-03-08T07:00:00Z")
    return text.strip()


def parse_time(text: str, option: str, zone: ZoneInfo) -> datetime:
    """An option's time as an aware UTC instant; local times are read in ``zone`` (see --help)."""
    from core.recurrence.resolve import candidates, gap_transition
    from core.timefmt import parse_instant, parse_local

    try:
        if _INSTANT_SUFFIX.search(text):
            return parse_instant(text)
        local = parse_local(text)
    except ValueError:
        if _DATE_FORM.match(text):
            raise UsageError(f"{option}: {text!r} is not a real date-time") from None
        raise UsageError(
            f"{option}: {text!r} is not a date-time; give an instant such as 2026-03-08T07:00:00Z, "
            "or a local date-time or date such as 2026-03-08T02:30 or 2026-03-08"
        ) from None
    found = candidates(zone, local)
    if found:
        return found[0]
    return gap_transition(zone, local).utc


# --- shared steps ---------------------------------------------------------------------


def _problem_lines(path: str, exc: UserError) -> list[str]:
    """One line per problem, each starting with the file it concerns."""
    from core.errors import SpecError, SpecFileError

    if isinstance(exc, SpecError):
        if exc.source is None:
            exc.source = path
        return exc.lines()
    if isinstance(exc, SpecFileError):
        return [str(exc)]
    return [f"{path}: {line}" for line in str(exc).splitlines() or [type(exc).__name__]]


class _Invalid(Exception):
    """Problems already worded for stderr, one per line."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _load(path: str) -> ScheduleSpec:
    """Read and validate a spec; ``-`` reads standard input."""
    from core.errors import UserError
    from core.spec import parse_spec
    from core.specfile import load_spec, load_text

    try:
        if path == "-":
            return parse_spec(load_text(sys.stdin.read(), "<stdin>"), source="<stdin>")
        return load_spec(path)
    except UserError as exc:
        raise _Invalid(_problem_lines(path, exc)) from None


def _now(args: argparse.Namespace, zone: ZoneInfo) -> datetime:
    if args.now is not None:
        return parse_time(args.now, "--now", zone)
    from core.clock import SystemClock

    return SystemClock().now()


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def use_colour(environ: dict[str, str] | None = None, *, tty: bool | None = None) -> bool:
    """ANSI colour only on a terminal, and never when NO_COLOR is set (no-color.org) or TERM is dumb."""
    env = os.environ if environ is None else environ
    is_tty = _stdout_is_terminal() if tty is None else tty
    return is_tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def _can_encode(sample: str) -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        sample.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


# --- commands -------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every file; ``ok`` per valid one on stdout, problems on stderr."""
    failed = False
    for path in args.specs:
        try:
            _load(path)
        except _Invalid as exc:
            failed = True
            for line in exc.lines:
                print(line, file=sys.stderr)
            continue
        _out("ok")
    return EXIT_INVALID if failed else EXIT_OK


def cmd_preview(args: argparse.Namespace) -> int:
    """The rows of CONTRACT §2 from --from on, in the chosen format."""
    from core.errors import UserError
    from core.preview import MAX_PREVIEW_ROWS, build_preview
    from core.recurrence.compile import compile_schedule
    from core.render import render

    spec = _load(args.spec)
    try:
        compiled = compile_schedule(spec)
    except UserError as exc:
        raise _Invalid(_problem_lines(args.spec, exc)) from None
    zone = compiled.zone
    now = _now(args, zone)
    start = parse_time(args.from_, "--from", zone) if args.from_ is not None else now
    if args.count is not None and args.count > MAX_PREVIEW_ROWS:
        raise UsageError(f"--count: at most {MAX_PREVIEW_ROWS:,} rows, got {args.count:,}")
    try:
        if args.until is not None:
            until = parse_time(args.until, "--until", zone)
            if until <= start:
                raise UsageError(
                    f"--until: {args.until!r} is not after the start of the preview ({start:%Y-%m-%dT%H:%M:%SZ})"
                )
            preview = build_preview(spec, start, until=until, compiled=compiled)
        else:
            preview = build_preview(spec, start, count=args.count or DEFAULT_COUNT, compiled=compiled)
    except UserError as exc:
        raise _Invalid(_problem_lines(args.spec, exc)) from None
    unicode = _can_encode("✓↷⊘②─—→·")
    _out(render(preview, args.format, color=use_colour(), unicode=unicode, stamp=now))
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """One paragraph: the rule, the zone, and what the policies do at the next gap and fold."""
    from core.errors import UserError
    from core.explain import explain
    from core.zones import get_zone

    spec = _load(args.spec)
    zone = get_zone(spec.time_zone)
    now = _now(args, zone)
    start = parse_time(args.from_, "--from", zone) if args.from_ is not None else now
    try:
        text = explain(spec, start)
    except UserError as exc:
        raise _Invalid(_problem_lines(args.spec, exc)) from None
    if _stdout_is_terminal():
        text = textwrap.fill(text, width=max(40, min(100, shutil.get_terminal_size().columns - 1)))
    _out(text)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """The JSON Schema of scheduleSpec.v1, for editors."""
    import json

    from core.spec import json_schema

    _out(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    return EXIT_OK


# --- the ledger -----------------------------------------------------------------------
#
# Every ledger command opens the ledger named by --db (else $SCHEDULER_DB_URL, else
# ledger.db in the user's data directory), does one unit of work and closes it.
# --now freezes the clock; a local --now is read on the wall clock of the schedule
# the command is about (apply: the spec's; backfill: the schedule's), else in UTC.


def _db_url(args: argparse.Namespace) -> str | None:
    return args.db or os.environ.get(DB_ENV) or None


def _clock(args: argparse.Namespace, zone_name: str = "UTC") -> FixedClock | SystemClock:
    """A clock frozen at --now, or the system clock."""
    from core.clock import FixedClock, SystemClock
    from core.zones import get_zone

    if args.now is None:
        return SystemClock()
    return FixedClock(parse_time(args.now, "--now", get_zone(zone_name)))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def _ledger(args: argparse.Namespace, clock: Clock) -> Iterator[Ledger]:
    """The open ledger; a database that refuses mid-command (locked, gone) becomes one LedgerError line."""
    from sqlalchemy.exc import OperationalError

    from core.errors import LedgerError
    from core.ledger.db import open_ledger

    ledger = open_ledger(_db_url(args), clock, busy_timeout=LOCK_WAIT_SECONDS)
    try:
        yield ledger
    except OperationalError as exc:
        said = _first_line(exc.orig if exc.orig is not None else exc)
        if "locked" in said.lower() or "busy" in said.lower():
            raise LedgerError(
                f"{ledger.where}: the ledger is locked by another program ({said}); try again when it has finished"
            ) from None
        raise LedgerError(f"{ledger.where}: the ledger cannot be used ({said})") from None
    finally:
        ledger.close()


def _unicode() -> bool:
    return _can_encode("—·②…→")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def cmd_apply(args: argparse.Namespace) -> int:
    """Validate a spec and publish it as its schedule's next revision."""
    from core.errors import PublishError
    from core.ledger.publish import publish
    from core.timefmt import fmt_utc

    spec = _load(args.spec)
    clock = _clock(args, spec.time_zone)
    with _ledger(args, clock) as ledger:
        try:
            with ledger.write() as session:
                result = publish(session, spec, clock)
        except PublishError as exc:
            raise _Invalid(_problem_lines(args.spec, exc)) from None
    head = (
        f"applied {result.schedule_id} revision {result.revision} "
        f"(cutover {fmt_utc(result.cutover_at)}, tzdb {result.tzdb_version})"
    )
    if result.created:
        _out(f"{head}; a new schedule")
    else:
        _out(f"{head}; cancelled {_plural(len(result.cancelled), 'occurrence')} of earlier revisions")
    return EXIT_OK


def cmd_schedules(args: argparse.Namespace) -> int:
    """Every schedule: gate, revision, zone, next due time, occurrences by state."""
    from core.ledger.queries import list_schedules
    from core.render.ledger_table import schedules_json, schedules_table

    with _ledger(args, _clock(args)) as ledger, ledger.read() as session:
        rows = list_schedules(session)
    _out(schedules_json(rows) if args.format == "json" else schedules_table(rows, unicode=_unicode()))
    return EXIT_OK


_GATE_WORDS = {"pause": "paused", "resume": "resumed", "disable": "disabled"}


def cmd_gate(args: argparse.Namespace) -> int:
    """pause, resume or disable: move the schedule's gate, with a note."""
    from core.ledger.publish import disable, pause, resume

    action = {"pause": pause, "resume": resume, "disable": disable}[args.command]
    clock = _clock(args)
    with _ledger(args, clock) as ledger, ledger.write() as session:
        change = action(session, args.schedule_id, clock, args.note)
    if not change.changed:
        _out(f"{args.schedule_id} is already {change.new.value}")
    else:
        note = f": {args.note}" if args.note else ""
        _out(f"{_GATE_WORDS[args.command]} {args.schedule_id} (was {change.old.value}){note}")
    return EXIT_OK


def pass_summary(report: PassReport, at: datetime) -> str:
    """One line about an engine pass."""
    from core.timefmt import fmt_utc

    counts = (
        f"materialized {report.materialized:,}, promoted {report.promoted:,}, expired {report.expired:,}, "
        f"recovered {report.recovered:,}, started {report.started:,}, skipped for overlap {report.skipped_overlap:,}"
    )
    outcomes = ", ".join(f"{state} {n:,}" for state, n in sorted(report.outcomes.items()))
    return f"pass at {fmt_utc(at)}: {counts}; " + (f"outcomes: {outcomes}" if outcomes else "nothing finished")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is between 0 and 65535, got {value}")
    return value


def cmd_engine_run(args: argparse.Namespace) -> int:
    """One full pass (--once), or passes until SIGINT or SIGTERM."""
    from core.engine.engine import Engine, EngineOptions

    if args.now is not None and not args.once:
        raise UsageError("--now: only with --once (a running engine follows the real clock)")
    if args.metrics_port is not None and args.once:
        raise UsageError("--metrics-port: only for a running engine (without --once)")
    clock = _clock(args)
    with _ledger(args, clock) as ledger:
        engine = Engine(ledger, clock, EngineOptions())
        if args.once:
            report = engine.run_once(wait=True)
            _out(pass_summary(report, clock.now()))
            return EXIT_OK
        return _run_forever(engine, ledger, clock, args)


def _run_forever(engine: Engine, ledger: Ledger, clock: Clock, args: argparse.Namespace) -> int:
    import signal
    import threading

    server = None
    if args.metrics_port is not None:
        server = _serve_metrics(ledger, clock, args.metrics_port)

    def on_signal(signum: int, _frame: object) -> None:
        engine.stop()
        # A second Ctrl-C interrupts at once (tasks of the last pass may still be finishing).
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)

    def on_pass(report: PassReport) -> None:
        busy = report.materialized or report.started or report.expired or report.recovered or report.outcomes
        if busy:
            _out(pass_summary(report, clock.now()))
            sys.stdout.flush()

    try:
        _out(f"engine {engine.worker} running on {ledger.where}; stop it with Ctrl-C or SIGTERM")
        sys.stdout.flush()
        engine.run_forever(poll_seconds=args.poll, on_pass=on_pass)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if server is not None:
            server.shutdown()
    _out("engine stopped")
    return EXIT_OK


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
    _out(f"metrics on http://127.0.0.1:{server.server_port}/metrics")
    return server


def cmd_engine_fence(args: argparse.Namespace) -> int:
    """Bump the execution epoch: claims of earlier epochs can no longer record outcomes."""
    from core.engine.admin import fence

    clock = _clock(args)
    with _ledger(args, clock) as ledger:
        epoch = fence(ledger, clock, args.note)
    _out(f"fenced the ledger: execution epoch is now {epoch}; claims of earlier epochs are void")
    return EXIT_OK


def cmd_run_now(args: argparse.Namespace) -> int:
    """A manual occurrence of the schedule, due at once; prints its id."""
    from core.engine.admin import run_now

    clock = _clock(args)
    with _ledger(args, clock) as ledger:
        occurrence_id = run_now(ledger, args.schedule_id, clock, args.note)
    _out(occurrence_id)
    return EXIT_OK


def cmd_backfill(args: argparse.Namespace) -> int:
    """Run a past range's occurrences that never ran, as recorded backfill occurrences."""
    from core.clock import FixedClock
    from core.engine.admin import backfill
    from core.ledger.publish import get_schedule
    from core.ledger.queries import list_schedules
    from core.timefmt import fmt_utc
    from core.zones import get_zone

    clock = _clock(args)
    with _ledger(args, clock) as ledger:
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
    queued = f", made {_plural(len(result.queued), 'occurrence')} that had not run due now" if result.queued else ""
    runs = result.created or result.queued
    lines = [
        f"backfill of {args.schedule_id} from {span}: created {_plural(len(result.created), 'occurrence')}{queued}"
        + (" (due now; the engine runs them oldest first)" if runs else "")
        + (f"; left {len(result.left):,} alone:" if result.left else "; left none alone")
    ]
    lines.extend(f"  {occurrence_id}: {why}" for occurrence_id, why in result.left)
    _out("\n".join(lines))
    return EXIT_OK


def _states(text: str) -> frozenset[Any]:
    """``--state DUE,retry_wait`` as states; unknown names are one line naming the valid ones."""
    from core.ledger.states import OccurrenceState

    names = [part.strip().upper() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in OccurrenceState.__members__]
    if unknown or not names:
        what = f"unknown state {', '.join(repr(n) for n in unknown)}" if unknown else "no state given"
        raise UsageError(f"--state: {what}; the states are {', '.join(s.value for s in OccurrenceState)}")
    return frozenset(OccurrenceState[name] for name in names)


def cmd_ledger(args: argparse.Namespace) -> int:
    """Occurrences in position order (positionUtc, nominalLocal, foldOrdinal), filtered."""
    from core.ledger.publish import get_schedule
    from core.ledger.queries import OccurrenceFilter, count_occurrences, list_occurrences
    from core.render.ledger_table import occurrences_json, occurrences_table

    states = _states(args.state) if args.state is not None else None
    where = OccurrenceFilter(schedule_id=args.schedule, states=states)
    with _ledger(args, _clock(args)) as ledger, ledger.read() as session:
        if args.schedule is not None:
            get_schedule(session, args.schedule)
        total = None
        if args.limit is not None:
            rows = list(list_occurrences(session, where, limit=args.limit).rows)
            total = count_occurrences(session, where)
        else:
            rows, key = [], None
            while True:
                page = list_occurrences(session, where, limit=_PAGE, after=key)
                rows.extend(page.rows)
                if page.next_key is None:
                    break
                key = page.next_key
    if args.format == "json":
        _out(occurrences_json(rows))
    else:
        _out(occurrences_table(rows, total=total, unicode=_unicode()))
    return EXIT_OK


def cmd_attempts(args: argparse.Namespace) -> int:
    """Every attempt of one occurrence, oldest first."""
    from sqlalchemy import select

    from core.ledger.models import Attempt
    from core.ledger.queries import get_occurrence
    from core.render.ledger_table import attempts_json, attempts_table

    with _ledger(args, _clock(args)) as ledger, ledger.read() as session:
        occurrence = get_occurrence(session, args.occurrence_id)
        if occurrence is None:
            raise UsageError(f"{args.occurrence_id}: no such occurrence in this ledger")
        attempts = list(
            session.scalars(
                select(Attempt).where(Attempt.occurrence_id == args.occurrence_id).order_by(Attempt.attempt_number)
            )
        )
        if args.format == "json":
            text = attempts_json(occurrence, attempts)
        else:
            text = attempts_table(occurrence, attempts, unicode=_unicode())
    _out(text)
    return EXIT_OK


_AFTER = {
    "happened": "a person said it happened",
    "not-happened": "a person said it did not happen; the next engine pass runs it again",
    "abandon": "abandoned by a person",
}


def cmd_reconcile(args: argparse.Namespace) -> int:
    """Resolve an UNKNOWN_EFFECT by a person's decision."""
    from core.engine.reconcile import Decision, reconcile

    decision = Decision(args.decision)
    clock = _clock(args)
    with _ledger(args, clock) as ledger:
        done = reconcile(ledger, args.occurrence_id, decision, clock, args.note)
    arrow = "→" if _unicode() else "->"
    _out(f"{done.occurrence_id}: {done.old.value} {arrow} {done.new.value} ({_AFTER[decision.value]})")
    return EXIT_OK


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Migrate the ledger's schema to the newest this Tidemark knows."""
    from core.ledger.db import upgrade_ledger

    revision = upgrade_ledger(_db_url(args), _clock(args), busy_timeout=LOCK_WAIT_SECONDS)
    _out(f"ledger schema at revision {revision} (the newest this Tidemark knows)")
    return EXIT_OK


def cmd_drift(args: argparse.Namespace) -> int:
    """Future occurrences the installed tz database would place at another instant."""
    from core.ledger.materialize import drift
    from core.ledger.publish import get_schedule
    from core.timefmt import fmt_utc
    from core.zones import tzdb_version

    clock = _clock(args)
    with _ledger(args, clock) as ledger, ledger.read() as session:
        if args.schedule is not None:
            get_schedule(session, args.schedule)
        items = drift(session, clock, args.schedule)
    if not items:
        _out(f"no drift: every future occurrence keeps its instant under the installed tzdb {tzdb_version()}")
        return EXIT_OK
    arrow = "→" if _unicode() else "->"
    lines = [f"{_plural(len(items), 'future occurrence')} would move under the installed tzdb {tzdb_version()}:"]
    for item in items:
        old = fmt_utc(item.stored_resolved_utc) if item.stored_resolved_utc else "no instant"
        new = fmt_utc(item.current_resolved_utc) if item.current_resolved_utc else "no instant"
        status = f" ({item.current_status.value})" if item.current_status is not None else " (no longer exists)"
        lines.append(
            f"  {item.occurrence_id} {item.schedule_id} revision {item.revision} {item.nominal_local}"
            f"#{item.fold_ordinal}: {old} (tzdb {item.stored_tzdb_version}) {arrow} {new}{status}"
        )
    lines.append("publish a new revision to adopt them; materialized instants are never rewritten")
    _out("\n".join(lines))
    return EXIT_OK


def _choose(what: str, choices: str) -> Callable[[argparse.Namespace], int]:
    def missing(args: argparse.Namespace) -> int:
        raise UsageError(f"choose {choices} (see schedctl {what} --help)")

    return missing


# --- the parser -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``schedctl`` (standard library only)."""
    parser = _Parser(
        prog="schedctl",
        description="Tidemark's command line: check, preview and explain schedules; "
        "publish them to a ledger, run them and look after what ran.",
        epilog="Exit status: 0 success, 2 invalid input, 1 internal error.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    validate = commands.add_parser(
        "validate", help="check spec files", description="Check spec files; prints ok per valid file."
    )
    validate.add_argument("specs", nargs="+", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")
    validate.set_defaults(func=cmd_validate)

    preview = commands.add_parser(
        "preview",
        help="list the occurrences a spec produces",
        description="List the rows with positionUtc >= --from: the first --count (default 10), "
        "or those before --until.",
        epilog=_TIME_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    preview.add_argument("spec", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")
    preview.add_argument("--from", dest="from_", type=_time_text, metavar="TIME", help="first position (default: now)")
    limit = preview.add_mutually_exclusive_group()
    limit.add_argument("--count", type=_count, metavar="N", help=f"rows to list (default {DEFAULT_COUNT})")
    limit.add_argument("--until", type=_time_text, metavar="TIME", help="list rows positioned before this time")
    preview.add_argument(
        "--format", choices=("table", "json", "csv", "ics"), default="table", help="output format (default table)"
    )
    preview.add_argument("--now", type=_time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
    preview.set_defaults(func=cmd_preview)

    explain = commands.add_parser(
        "explain",
        help="describe a spec in plain words",
        description="One paragraph: the rule, the zone, and what each policy does at the next gap and fold.",
        epilog=_TIME_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("spec", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")
    explain.add_argument("--from", dest="from_", type=_time_text, metavar="TIME", help="look ahead from (default: now)")
    explain.add_argument("--now", type=_time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
    explain.set_defaults(func=cmd_explain)

    schema = commands.add_parser("schema", help="print the JSON Schema of scheduleSpec.v1")
    schema.set_defaults(func=cmd_schema)
    _add_ledger_commands(commands)
    return parser


def _ledger_options() -> argparse.ArgumentParser:
    """--db and --now, shared by every ledger command."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--db",
        metavar="URL",
        help=f"the ledger: a SQLite file or URL, or postgresql+psycopg://user@host/db "
        f"(default: ${DB_ENV}, else ledger.db in your data directory)",
    )
    common.add_argument("--now", type=_time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
    return common


def _add_ledger_commands(commands: Any) -> None:
    common = [_ledger_options()]

    def add(name: str, func: Callable[[argparse.Namespace], int], help: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("epilog", _LEDGER_TIME_HELP)
        sub: argparse.ArgumentParser = commands.add_parser(name, help=help, parents=common, **kwargs)
        sub.set_defaults(func=func, where=f"schedctl {name}")
        return sub

    def formats(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")

    def note(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--note", metavar="TEXT", help="why (recorded in the ledger's events)")

    apply = add(
        "apply",
        cmd_apply,
        "publish a spec to the ledger",
        description="Validate a spec and publish it as its schedule's next revision. Not-yet-started "
        "occurrences of earlier revisions at or after its cutoverAt are cancelled.",
    )
    apply.add_argument("spec", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")

    schedules = add("schedules", cmd_schedules, "list the ledger's schedules")
    formats(schedules)

    for name, what in (
        ("pause", "stop dispatching a schedule (occurrences are still materialized)"),
        ("resume", "make a paused or disabled schedule active again"),
        ("disable", "stop materializing and dispatching a schedule"),
    ):
        gate = add(name, cmd_gate, what, description=what[0].upper() + what[1:] + ".")
        gate.add_argument("schedule_id", metavar="ID", help="the schedule")
        note(gate)

    engine = commands.add_parser("engine", help="run the engine, or fence off older engines")
    engine.set_defaults(func=_choose("engine", "run or fence"), where="schedctl engine")
    engine_commands = engine.add_subparsers(dest="engine_command", metavar="COMMAND", parser_class=_Parser)
    run = engine_commands.add_parser(
        "run",
        help="run the engine",
        parents=common,
        description="Run the engine until SIGINT or SIGTERM; with --once, do one full pass (materialize, "
        "recover, dispatch everything due, wait for the tasks it started) and exit.",
        epilog=_LEDGER_TIME_HELP,
    )
    run.set_defaults(func=cmd_engine_run, where="schedctl engine run")
    run.add_argument("--once", action="store_true", help="one full pass, then exit")
    run.add_argument("--metrics-port", type=_port, metavar="N", help="serve Prometheus metrics on 127.0.0.1:N")
    run.add_argument("--poll", type=_seconds, default=1.0, metavar="SECONDS", help="seconds between passes (default 1)")
    fence = engine_commands.add_parser(
        "fence",
        help="void the claims of every engine running now",
        parents=common,
        description="Bump the ledger's execution epoch: claims made under an earlier epoch can no longer record "
        "outcomes, and the next pass settles their attempts as lost.",
        epilog=_LEDGER_TIME_HELP,
    )
    fence.set_defaults(func=cmd_engine_fence, where="schedctl engine fence")
    note(fence)

    run_now = add("run-now", cmd_run_now, "run a schedule's task now (prints the new occurrence id)")
    run_now.add_argument("schedule_id", metavar="ID", help="the schedule")
    note(run_now)

    backfill = add(
        "backfill",
        cmd_backfill,
        "run a past range's occurrences that never ran",
        description="Create a backfill occurrence, due now, for each occurrence with a position in [--from, --to) "
        "that never ran; ones that succeeded, are live or wait for a person are left alone.",
    )
    backfill.add_argument("schedule_id", metavar="ID", help="the schedule")
    backfill.add_argument("--from", dest="from_", type=_time_text, required=True, metavar="TIME", help="first position")
    backfill.add_argument("--to", type=_time_text, required=True, metavar="TIME", help="end of the range (excluded)")
    note(backfill)

    ledger = add(
        "ledger",
        cmd_ledger,
        "list occurrences",
        description="Occurrences in position order (positionUtc, nominalLocal, foldOrdinal), oldest first.",
    )
    ledger.add_argument("--schedule", metavar="ID", help="only this schedule's")
    ledger.add_argument("--state", metavar="S[,S...]", help="only these states (e.g. DUE,RETRY_WAIT)")
    ledger.add_argument("--limit", type=_count, metavar="N", help="the first N in position order (default: all)")
    formats(ledger)

    attempts = add("attempts", cmd_attempts, "list the attempts of one occurrence")
    attempts.add_argument("occurrence_id", metavar="OCCURRENCE_ID", help="the occurrence")
    formats(attempts)

    reconcile = add(
        "reconcile",
        cmd_reconcile,
        "resolve an UNKNOWN_EFFECT occurrence",
        description="Record a person's decision about an occurrence whose effect is unknown: it happened "
        "(SUCCEEDED), it did not (RETRY_WAIT, run again at once), or give up (FAILED).",
    )
    reconcile.add_argument("occurrence_id", metavar="OCCURRENCE_ID", help="the occurrence")
    decision = reconcile.add_mutually_exclusive_group(required=True)
    decision.add_argument("--happened", dest="decision", action="store_const", const="happened")
    decision.add_argument("--not-happened", dest="decision", action="store_const", const="not-happened")
    decision.add_argument("--abandon", dest="decision", action="store_const", const="abandon")
    note(reconcile)

    db = commands.add_parser("db", help="look after the ledger's database")
    db.set_defaults(func=_choose("db", "upgrade"), where="schedctl db")
    db_commands = db.add_subparsers(dest="db_command", metavar="COMMAND", parser_class=_Parser)
    upgrade = db_commands.add_parser("upgrade", help="migrate the ledger's schema to the newest", parents=common)
    upgrade.set_defaults(func=cmd_db_upgrade, where="schedctl db upgrade")

    drift = add(
        "drift",
        cmd_drift,
        "list future occurrences the installed tz database would move",
        description="Future, not-started occurrences whose instant differs under the installed tzdata "
        "(materialized instants are never rewritten; a new revision adopts them).",
    )
    drift.add_argument("--schedule", metavar="ID", help="only this schedule's")


def _internal_error(exc: BaseException) -> int:
    print(f"schedctl: internal error: {type(exc).__name__}: {exc} (this is a bug; please report it)", file=sys.stderr)
    traceback.print_exception(exc, file=sys.stderr)
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    """After a closed pipe (``schedctl preview ... | head``), send what is left nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``schedctl`` with ``argv`` (default: the process arguments); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    except SystemExit as exc:  # --help and friends
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        print("schedctl: choose a command (see schedctl --help)", file=sys.stderr)
        return EXIT_INVALID
    where = getattr(args, "where", None) or f"schedctl {args.command}"
    try:
        return func(args)
    except _Invalid as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return EXIT_INVALID
    except UsageError as exc:
        print(f"{where}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print("schedctl: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        from core.errors import UserError

        if isinstance(exc, UserError):
            if getattr(args, "where", None) is not None:
                # Ledger errors name the ledger, the schedule or the occurrence themselves.
                lines = [f"{where}: {line}" for line in str(exc).splitlines() or [type(exc).__name__]]
            else:
                lines = _problem_lines(getattr(args, "spec", "schedctl"), exc)
            for line in lines:
                print(line, file=sys.stderr)
            return EXIT_INVALID
        return _internal_error(exc)


if __name__ == "__main__":
    raise SystemExit(main())
