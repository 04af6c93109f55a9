"""The argument parser of ``schedctl``: every command, its options and its help text.

Standard library only: building the parser imports no part of the core, so that
``schedctl --help`` answers at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from core.cli.arguments import Parser, ledger_text, poll_seconds, port_number, positive_count, time_text
from core.cli.common import DB_ENV, DEFAULT_COUNT, UsageError
from core.cli.engine_commands import (
    cmd_backfill,
    cmd_engine_fence,
    cmd_engine_run,
    cmd_install_service,
    cmd_reconcile,
    cmd_run_now,
    cmd_uninstall_service,
)
from core.cli.ledger_commands import (
    cmd_apply,
    cmd_attempts,
    cmd_db_upgrade,
    cmd_drift,
    cmd_gate,
    cmd_ledger,
    cmd_schedules,
)
from core.cli.spec_commands import cmd_explain, cmd_preview, cmd_schema, cmd_validate

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``schedctl`` (standard library only)."""
    parser = Parser(
        prog="schedctl",
        description="Tidemark's command line: check, preview and explain schedules; "
        "publish them to a ledger, run them and look after what ran.",
        epilog="Exit status: 0 success, 2 invalid input, 1 internal error.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _add_spec_commands(commands)
    _add_ledger_commands(commands)
    return parser


def _choose(what: str, choices: str) -> Callable[[argparse.Namespace], int]:
    """The command of a group given without its subcommand (``schedctl engine``): one line naming the choices."""

    def missing(args: argparse.Namespace) -> int:
        raise UsageError(f"choose {choices} (see schedctl {what} --help)")

    return missing


def _add_spec_commands(commands: Any) -> None:
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
    preview.add_argument("--from", dest="from_", type=time_text, metavar="TIME", help="first position (default: now)")
    limit = preview.add_mutually_exclusive_group()
    limit.add_argument("--count", type=positive_count, metavar="N", help=f"rows to list (default {DEFAULT_COUNT})")
    limit.add_argument("--until", type=time_text, metavar="TIME", help="list rows positioned before this time")
    preview.add_argument(
        "--format", choices=("table", "json", "csv", "ics"), default="table", help="output format (default table)"
    )
    preview.add_argument("--now", type=time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
    preview.set_defaults(func=cmd_preview)

    explain = commands.add_parser(
        "explain",
        help="describe a spec in plain words",
        description="One paragraph: the rule, the zone, and what each policy does at the next gap and fold.",
        epilog=_TIME_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explain.add_argument("spec", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")
    explain.add_argument("--from", dest="from_", type=time_text, metavar="TIME", help="look ahead from (default: now)")
    explain.add_argument("--now", type=time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
    explain.set_defaults(func=cmd_explain)

    schema = commands.add_parser("schema", help="print the JSON Schema of scheduleSpec.v1")
    schema.set_defaults(func=cmd_schema)


def _ledger_options() -> argparse.ArgumentParser:
    """--db and --now, shared by every ledger command."""
    common = Parser(add_help=False)
    common.add_argument(
        "--db",
        metavar="URL",
        help=f"the ledger: a SQLite file or URL, or postgresql+psycopg://user@host/db "
        f"(default: ${DB_ENV}, else ledger.db in your data directory)",
    )
    common.add_argument("--now", type=time_text, metavar="TIME", help="freeze the current time (tests, simulation)")
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
        sub.add_argument("--note", type=ledger_text, metavar="TEXT", help="why (recorded in the ledger's events)")

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
        gate.add_argument("schedule_id", type=ledger_text, metavar="ID", help="the schedule")
        note(gate)

    engine = commands.add_parser("engine", help="run the engine, fence off older engines, or install it as a service")
    engine.set_defaults(
        func=_choose("engine", "run, fence, install-service or uninstall-service"), where="schedctl engine"
    )
    engine_commands = engine.add_subparsers(dest="engine_command", metavar="COMMAND", parser_class=Parser)
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
    run.add_argument("--metrics-port", type=port_number, metavar="N", help="serve Prometheus metrics on 127.0.0.1:N")
    run.add_argument(
        "--poll", type=poll_seconds, default=1.0, metavar="SECONDS", help="seconds between passes (default 1)"
    )
    run.add_argument(
        "--allow-second",
        action="store_true",
        help="start even while another engine dispatches on this ledger (two dispatchers)",
    )
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
    install = engine_commands.add_parser(
        "install-service",
        help="keep the engine running as a systemd user service",
        parents=common,
        description="Write ~/.config/systemd/user/tidemark-engine.service (ExecStart: this installation's "
        "schedctl engine run --db URL, Restart=on-failure), reload the user manager, and enable and start it. "
        "Where systemd or a user session is missing, says so and prints the command to run instead (exit 1).",
        epilog=_LEDGER_TIME_HELP,
    )
    install.set_defaults(func=cmd_install_service, where="schedctl engine install-service")
    uninstall = engine_commands.add_parser(
        "uninstall-service",
        help="stop and remove the systemd user service",
        description="Stop and disable tidemark-engine.service, remove its unit file and reload the user manager.",
    )
    uninstall.set_defaults(func=cmd_uninstall_service, where="schedctl engine uninstall-service")

    run_now = add("run-now", cmd_run_now, "run a schedule's task now (prints the new occurrence id)")
    run_now.add_argument("schedule_id", type=ledger_text, metavar="ID", help="the schedule")
    note(run_now)

    backfill = add(
        "backfill",
        cmd_backfill,
        "run a past range's occurrences that never ran",
        description="Run, oldest first, each occurrence with a position in [--from, --to) that never ran: one not "
        "run yet is made due now under its own id, one that expired, was skipped or failed gets a backfill "
        "occurrence; ones that succeeded, are live or wait for a person are left alone.",
    )
    backfill.add_argument("schedule_id", type=ledger_text, metavar="ID", help="the schedule")
    backfill.add_argument("--from", dest="from_", type=time_text, required=True, metavar="TIME", help="first position")
    backfill.add_argument("--to", type=time_text, required=True, metavar="TIME", help="end of the range (excluded)")
    note(backfill)

    ledger = add(
        "ledger",
        cmd_ledger,
        "list occurrences",
        description="Occurrences in position order (positionUtc, nominalLocal, foldOrdinal), oldest first.",
    )
    ledger.add_argument("--schedule", type=ledger_text, metavar="ID", help="only this schedule's")
    ledger.add_argument("--state", metavar="S[,S...]", help="only these states (e.g. DUE,RETRY_WAIT)")
    ledger.add_argument(
        "--limit", type=positive_count, metavar="N", help="the first N in position order (default: all)"
    )
    formats(ledger)

    attempts = add("attempts", cmd_attempts, "list the attempts of one occurrence")
    attempts.add_argument("occurrence_id", type=ledger_text, metavar="OCCURRENCE_ID", help="the occurrence")
    formats(attempts)

    reconcile = add(
        "reconcile",
        cmd_reconcile,
        "resolve an UNKNOWN_EFFECT occurrence",
        description="Record a person's decision about an occurrence whose effect is unknown: it happened "
        "(SUCCEEDED), it did not (RETRY_WAIT, run again at once), or give up (FAILED).",
    )
    reconcile.add_argument("occurrence_id", type=ledger_text, metavar="OCCURRENCE_ID", help="the occurrence")
    decision = reconcile.add_mutually_exclusive_group(required=True)
    decision.add_argument("--happened", dest="decision", action="store_const", const="happened")
    decision.add_argument("--not-happened", dest="decision", action="store_const", const="not-happened")
    decision.add_argument("--abandon", dest="decision", action="store_const", const="abandon")
    note(reconcile)

    db = commands.add_parser("db", help="look after the ledger's database")
    db.set_defaults(func=_choose("db", "upgrade"), where="schedctl db")
    db_commands = db.add_subparsers(dest="db_command", metavar="COMMAND", parser_class=Parser)
    upgrade = db_commands.add_parser("upgrade", help="migrate the ledger's schema to the newest", parents=common)
    upgrade.set_defaults(func=cmd_db_upgrade, where="schedctl db upgrade")

    drift = add(
        "drift",
        cmd_drift,
        "list future occurrences the installed tz database would move",
        description="Future, not-started occurrences whose instant differs under the installed tzdata "
        "(materialized instants are never rewritten; a new revision adopts them).",
    )
    drift.add_argument("--schedule", type=ledger_text, metavar="ID", help="only this schedule's")
