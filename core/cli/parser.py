"""The argument parser of ``schedctl``: a table of every command, its options and its help
text (:data:`COMMANDS`), and the builder that turns the table into argparse.

Standard library only: building the parser imports no part of the core, so that
``schedctl --help`` answers at once.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from core.cli.arguments import (
    Parser,
    day_count,
    engine_label,
    ledger_text,
    poll_seconds,
    port_number,
    positive_count,
    time_text,
    trusted_user,
)
from core.cli.common import DB_ENV, DEFAULT_COUNT, UsageError

Run = Callable[[argparse.Namespace], int]


class Later:
    """A command's function, imported from its module only when the command runs: ``schedctl
    validate`` loads neither the ledger nor the engine, and ``--help`` no command module at all.

    This and the records of the table are plain classes and named tuples, not dataclasses: a
    frozen dataclass takes half a millisecond to make, at every command's start."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __repr__(self) -> str:
        return f"Later({self.module!r}, {self.name!r})"

    def __call__(self, args: argparse.Namespace) -> int:
        run: Run = getattr(importlib.import_module(self.module), self.name)
        return run(args)


cmd_alerts_list = Later("core.cli.alert_commands", "cmd_alerts_list")
cmd_alerts_set = Later("core.cli.alert_commands", "cmd_alerts_set")
cmd_alerts_test = Later("core.cli.alert_commands", "cmd_alerts_test")
cmd_apply = Later("core.cli.apply_command", "cmd_apply")
cmd_backfill = Later("core.cli.engine_commands", "cmd_backfill")
cmd_engine_fence = Later("core.cli.engine_commands", "cmd_engine_fence")
cmd_engine_run = Later("core.cli.engine_commands", "cmd_engine_run")
cmd_install_service = Later("core.cli.engine_commands", "cmd_install_service")
cmd_reconcile = Later("core.cli.engine_commands", "cmd_reconcile")
cmd_run_now = Later("core.cli.engine_commands", "cmd_run_now")
cmd_uninstall_service = Later("core.cli.engine_commands", "cmd_uninstall_service")
cmd_export_crontab = Later("core.cli.export_crontab", "cmd_export_crontab")
cmd_import_crontab = Later("core.cli.import_commands", "cmd_import_crontab")
cmd_import_systemd = Later("core.cli.import_commands", "cmd_import_systemd")
cmd_attempts = Later("core.cli.ledger_commands", "cmd_attempts")
cmd_db_upgrade = Later("core.cli.ledger_commands", "cmd_db_upgrade")
cmd_drift = Later("core.cli.ledger_commands", "cmd_drift")
cmd_events = Later("core.cli.ledger_commands", "cmd_events")
cmd_gate = Later("core.cli.ledger_commands", "cmd_gate")
cmd_ledger = Later("core.cli.ledger_commands", "cmd_ledger")
cmd_schedules = Later("core.cli.ledger_commands", "cmd_schedules")
cmd_shadow = Later("core.cli.ledger_commands", "cmd_shadow")
cmd_db_grant = Later("core.cli.role_commands", "cmd_db_grant")
cmd_secret_delete = Later("core.cli.secret_commands", "cmd_secret_delete")
cmd_secret_list = Later("core.cli.secret_commands", "cmd_secret_list")
cmd_secret_set = Later("core.cli.secret_commands", "cmd_secret_set")
cmd_demos = Later("core.cli.spec_commands", "cmd_demos")
cmd_explain = Later("core.cli.spec_commands", "cmd_explain")
cmd_preview = Later("core.cli.spec_commands", "cmd_preview")
cmd_schema = Later("core.cli.spec_commands", "cmd_schema")
cmd_validate = Later("core.cli.spec_commands", "cmd_validate")
cmd_export_systemd = Later("core.cli.systemd_export_command", "cmd_export_systemd")


class Arg(NamedTuple):
    """One argument: the names and the keywords :meth:`argparse.ArgumentParser.add_argument` takes."""

    names: tuple[str, ...]
    options: Mapping[str, Any]


def arg(*names: str, **options: Any) -> Arg:
    """An :class:`Arg`, written as its ``add_argument`` call would be."""
    return Arg(names, options)


class OneOf(NamedTuple):
    """Arguments that exclude one another; with ``required``, one of them must be given."""

    args: tuple[Arg, ...]
    required: bool = False


class Command(NamedTuple):
    """One command: its help, its arguments in the order ``--help`` lists them, and what runs it.

    A command with ``subcommands`` runs none itself: given alone, it names them.
    """

    name: str
    help: str
    run: Run | None = None
    description: str | None = None
    epilog: str | None = None
    args: tuple[Arg | OneOf, ...] = ()
    subcommands: tuple[Command, ...] = ()
    #: Errors start with the command's own name (``schedctl engine run: ...``). Not for the spec
    #: commands: their errors name the spec file and the key instead.
    names_itself: bool = False
    #: The description and epilog keep the line breaks they are written with.
    keeps_lines: bool = False


# --- help texts and arguments shared by several commands ------------------------------


def _spec_times(*flags: str) -> str:
    """The footer of a spec command that takes ``flags``: how their times are read."""
    return f"""\
Times ({", ".join(flags)}) are either an instant with Z or an offset
(2026-03-08T07:00:00Z, 2026-03-08T02:00:00-05:00), or a local date-time or
date (2026-03-08T02:30, 2026-03-08) read on the wall clock of the schedule's
timeZone. A local time that happens twice means its first reading; one that
does not exist (clocks jump over it) means the moment the clocks jump.
"""


def _ledger_times(flags: str, where: str) -> str:
    """The footer of a ledger command that takes time flags besides ``--now``: how they are read."""
    return (
        f"Times ({flags}) are an instant with Z or an offset (2026-03-08T07:00:00Z), or a local date-time or "
        f"date (2026-03-08T02:30, 2026-03-08) read {where}."
    )


_SPEC = arg("spec", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)")
_NOW = arg(
    "--now",
    type=time_text,
    metavar="TIME",
    help="freeze the current time (tests, simulation), an instant such as 2026-03-08T07:00:00Z",
)
#: --db and --now, first among the options of every command that opens the ledger.
_LEDGER = (
    arg(
        "--db",
        metavar="URL",
        help=f"the ledger: a SQLite file or URL, or postgresql+psycopg://user@host/db "
        f"(default: ${DB_ENV}, else ledger.db in your data directory)",
    ),
    _NOW,
)
_FORMAT = arg("--format", choices=("table", "json"), default="table", help="output format (default table)")
_NOTE = arg("--note", type=ledger_text, metavar="TEXT", help="why (recorded in the ledger's events)")
_SCHEDULE_ID = arg("schedule_id", type=ledger_text, metavar="ID", help="the schedule")
_OCCURRENCE_ID = arg("occurrence_id", type=ledger_text, metavar="OCCURRENCE_ID", help="the occurrence")
_ONLY_SCHEDULE = arg("--schedule", type=ledger_text, metavar="ID", help="only this schedule's")


def _ledger_command(
    name: str,
    help: str,
    run: Run,
    *args: Arg | OneOf,
    description: str | None = None,
    epilog: str | None = None,
) -> Command:
    """A command on the ledger: --db and --now, errors that name the command; ``epilog`` says how its
    time flags are read, for a command that takes any besides --now."""
    return Command(name, help, run, description=description, epilog=epilog, args=(*_LEDGER, *args), names_itself=True)


def _gate(name: str, what: str) -> Command:
    return _ledger_command(name, what, cmd_gate, _SCHEDULE_ID, _NOTE, description=what[0].upper() + what[1:] + ".")


# --- the table --------------------------------------------------------------------------

PROG = "schedctl"
DESCRIPTION = (
    "Tidemark's command line: check, preview and explain schedules; "
    "publish them to a ledger, run them and look after what ran."
)
EPILOG = "Exit status: 0 success, 2 invalid input, 1 internal error; shadow: 3 when the future computes otherwise."

_SPEC_COMMANDS = (
    Command(
        "validate",
        "check spec files",
        cmd_validate,
        description="Check spec files; prints ok per valid file.",
        args=(arg("specs", nargs="+", metavar="SPEC", help="a YAML or JSON spec file (- for stdin)"),),
    ),
    Command(
        "preview",
        "list the occurrences a spec produces",
        cmd_preview,
        description="List the rows with positionUtc >= --from: the first --count (default 10), "
        "or those before --until.",
        epilog=_spec_times("--from", "--until", "--now"),
        keeps_lines=True,
        args=(
            _SPEC,
            arg("--from", dest="from_", type=time_text, metavar="TIME", help="first position (default: now)"),
            OneOf(
                (
                    arg("--count", type=positive_count, metavar="N", help=f"rows to list (default {DEFAULT_COUNT})"),
                    arg("--until", type=time_text, metavar="TIME", help="list rows positioned before this time"),
                )
            ),
            arg(
                "--format",
                choices=("table", "json", "csv", "ics"),
                default="table",
                help="output format (default table)",
            ),
            _NOW,
        ),
    ),
    Command(
        "explain",
        "describe a spec in plain words",
        cmd_explain,
        description="One paragraph: the rule, the zone, and what each policy does at the next gap and fold.",
        epilog=_spec_times("--from", "--now"),
        keeps_lines=True,
        args=(
            _SPEC,
            arg("--from", dest="from_", type=time_text, metavar="TIME", help="look ahead from (default: now)"),
            _NOW,
        ),
    ),
    Command("schema", "print the JSON Schema of scheduleSpec.v1", cmd_schema),
    Command(
        "demos",
        "list the demo schedules shipped with Tidemark",
        cmd_demos,
        description="Without NAME: one line per demo schedule, its name and its file. With NAME: that file "
        'alone, for the other commands: schedctl preview "$(schedctl demos nightly-backup)".',
        args=(arg("name", nargs="?", metavar="NAME", help="a demo's name (its file name without .yaml)"),),
        names_itself=True,
    ),
)

_TEAM_ENGINE = (
    arg(
        "--allow-second",
        action="store_true",
        help="start even while another engine dispatches on this ledger (two dispatchers)",
    ),
    arg(
        "--label",
        action="append",
        type=engine_label,
        metavar="KEY=VALUE",
        help="a label of this engine, for specs' runsOn (repeatable; host and user are built in)",
    ),
    arg(
        "--trust",
        action="append",
        type=trusted_user,
        metavar="NAME",
        help="also run revisions published by NAME: a database role on PostgreSQL, an OS user on SQLite "
        "(repeatable; '*' for anyone; by default your OS user's name and the engine's own role)",
    ),
)

_METRICS_PORT = arg("--metrics-port", type=port_number, metavar="N", help="serve Prometheus metrics on 127.0.0.1:N")
_NO_NOTIFY = arg(
    "--no-notify",
    action="store_true",
    help="no desktop notifications when something needs a person (by default a running engine sends them "
    "on the session bus, unless a window on the same ledger runs)",
)

_ENGINE = Command(
    "engine",
    "run the engine, fence off older engines, or install it as a service",
    names_itself=True,
    subcommands=(
        _ledger_command(
            "run",
            "run the engine",
            cmd_engine_run,
            arg("--once", action="store_true", help="one full pass, then exit"),
            _METRICS_PORT,
            arg("--poll", type=poll_seconds, default=1.0, metavar="SECONDS", help="seconds between passes (default 1)"),
            *_TEAM_ENGINE,
            _NO_NOTIFY,
            description="Run the engine until SIGINT or SIGTERM; with --once, do one full pass (materialize, "
            "recover, dispatch everything due, wait for the tasks it started) and exit.",
        ),
        _ledger_command(
            "fence",
            "void the claims of every engine running now",
            cmd_engine_fence,
            _NOTE,
            description="Bump the ledger's execution epoch: claims made under an earlier epoch can no longer "
            "record outcomes, and the next pass settles their attempts as lost.",
        ),
        Command(
            "install-service",
            "keep the engine running as a systemd user service",
            cmd_install_service,
            args=(
                _LEDGER[0],
                # systemctl's --now would be ignored here: refused, in one line that says why.
                arg(
                    "--now",
                    nargs="?",
                    const="",
                    metavar="TIME",
                    help="refused: the service is always enabled and started at once",
                ),
                _METRICS_PORT,
                *_TEAM_ENGINE,
                _NO_NOTIFY,
            ),
            names_itself=True,
            description="Write ~/.config/systemd/user/tidemark-engine.service (ExecStart: this installation's "
            "schedctl engine run with the ledger in its environment, and --metrics-port, --allow-second, "
            "--label, --trust and --no-notify when given, "
            "Restart=on-failure), reload the user manager, and enable and start it. "
            "Where systemd or a user session is missing, says so and prints the command to run instead (exit 1). "
            "On macOS: writes the launchd agent ~/Library/LaunchAgents/io.github.tidemark.Tidemark.engine.plist "
            "(same command, RunAtLoad, KeepAlive, logs in ~/Library/Logs/Tidemark) and prints the "
            "launchctl bootstrap line that starts it.",
        ),
        Command(
            "uninstall-service",
            "stop and remove the systemd user service",
            cmd_uninstall_service,
            description="Stop and disable tidemark-engine.service, remove its unit file and reload the user manager "
            "(macOS: remove the launchd agent's plist and print the launchctl bootout line that stops it).",
            names_itself=True,
        ),
    ),
)

_LEDGER_COMMANDS = (
    _ledger_command(
        "apply",
        "publish specs to the ledger",
        cmd_apply,
        arg(
            "specs",
            nargs="+",
            metavar="SPEC",
            help="a YAML or JSON spec file (- for stdin), or a folder: its *.yaml and *.yml files below it",
        ),
        description="Validate every spec, then publish each as its schedule's next revision, all in one "
        "transaction: when any spec is refused, nothing is published. A spec already published as it is "
        "is left unchanged. Not-yet-started occurrences of earlier revisions at or after a new revision's "
        "cutoverAt are cancelled.",
    ),
    _ledger_command("schedules", "list the ledger's schedules", cmd_schedules, _FORMAT),
    _gate("pause", "stop dispatching a schedule (occurrences are still materialized)"),
    _gate("resume", "make a paused or disabled schedule active again"),
    _gate("disable", "stop materializing and dispatching a schedule"),
    _ENGINE,
    _ledger_command(
        "run-now", "run a schedule's task now (prints the new occurrence id)", cmd_run_now, _SCHEDULE_ID, _NOTE
    ),
    _ledger_command(
        "backfill",
        "run a past range's occurrences that never ran",
        cmd_backfill,
        _SCHEDULE_ID,
        arg("--from", dest="from_", type=time_text, required=True, metavar="TIME", help="first position"),
        arg("--to", type=time_text, required=True, metavar="TIME", help="end of the range (excluded)"),
        _NOTE,
        description="Run, oldest first, each occurrence with a position in [--from, --to) that never ran: one not "
        "run yet is made due now under its own id, one that expired, was skipped or failed gets a backfill "
        "occurrence; ones that succeeded, are live or wait for a person are left alone.",
        epilog=_ledger_times("--from, --to, --now", "on the wall clock of the schedule's timeZone"),
    ),
    _ledger_command(
        "ledger",
        "list occurrences",
        cmd_ledger,
        _ONLY_SCHEDULE,
        arg("--state", metavar="S[,S...]", help="only these states (e.g. DUE,RETRY_WAIT)"),
        arg("--limit", type=positive_count, metavar="N", help="the first N in position order (default: all)"),
        _FORMAT,
        description="Occurrences in position order (positionUtc, nominalLocal, foldOrdinal), oldest first.",
    ),
    _ledger_command("attempts", "list the attempts of one occurrence", cmd_attempts, _OCCURRENCE_ID, _FORMAT),
    _ledger_command(
        "events",
        "print the audit log: who did what, when",
        cmd_events,
        _ONLY_SCHEDULE,
        arg("--occurrence", type=ledger_text, metavar="OCCURRENCE_ID", help="only this occurrence's"),
        arg("--since", type=time_text, metavar="TIME", help="only events at or after TIME (a local time is UTC)"),
        arg("--kind", metavar="K[,K...]", help="only these kinds (e.g. schedule.paused,occurrence.acknowledged)"),
        arg("--limit", type=positive_count, metavar="N", help="only the newest N (default: all)"),
        _FORMAT,
        description="The ledger's events, oldest first: the time (UTC), who acted (user@host, with the database "
        "role where it is not the user's name; - for events from before actors were recorded), what happened "
        "and the note. Written as it is read, so a long log can be piped.",
        epilog=_ledger_times("--since, --now", "in UTC"),
    ),
    _ledger_command(
        "reconcile",
        "resolve an UNKNOWN_EFFECT occurrence",
        cmd_reconcile,
        _OCCURRENCE_ID,
        OneOf(
            tuple(
                arg(f"--{decision}", dest="decision", action="store_const", const=decision, help=meaning)
                for decision, meaning in (
                    ("happened", "the effect took place: SUCCEEDED"),
                    ("not-happened", "it did not: RETRY_WAIT, due again at once"),
                    ("abandon", "give up on it: FAILED"),
                )
            ),
            required=True,
        ),
        _NOTE,
        description="Record a person's decision about an occurrence whose effect is unknown: it happened "
        "(SUCCEEDED), it did not (RETRY_WAIT, run again at once), or give up (FAILED).",
    ),
    Command(
        "db",
        "look after the ledger's database",
        names_itself=True,
        subcommands=(
            _ledger_command("upgrade", "migrate the ledger's schema to the newest", cmd_db_upgrade),
            Command(
                "grant",
                "give a PostgreSQL role exactly the rights of a viewer, a publisher or an engine",
                cmd_db_grant,
                description="Create ROLE (able to log in, no password) or take the existing one, and give it exactly "
                "the rights its kind needs on the ledger's tables, revoking any others it had there: a viewer "
                "reads; a publisher also publishes, pauses, resumes, disables, runs now, backfills, reconciles and "
                "fences; an engine also runs schedules and records what ran, but cannot publish. Run it as the "
                "ledger's owner. PostgreSQL only.",
                args=(
                    _LEDGER[0],
                    arg(
                        "role",
                        type=ledger_text,
                        metavar="ROLE",
                        help="the database role (created when it does not exist)",
                    ),
                    arg(
                        "--as",
                        dest="kind",
                        required=True,
                        choices=("viewer", "publisher", "engine"),
                        help="what the role may do",
                    ),
                ),
                names_itself=True,
            ),
        ),
    ),
    _ledger_command(
        "drift",
        "list future occurrences the installed tz database would move, or decide about them",
        cmd_drift,
        _ONLY_SCHEDULE,
        OneOf(
            (
                arg(
                    "--keep",
                    type=ledger_text,
                    metavar="ID",
                    help="keep the schedule's drifted runs as materialized (the attention item leaves)",
                ),
                arg(
                    "--republish",
                    type=ledger_text,
                    metavar="ID",
                    help="publish the schedule's spec again with its cutover now, under the installed tzdata",
                ),
            )
        ),
        arg("--note", type=ledger_text, metavar="TEXT", help="why (with --keep; recorded in the ledger's events)"),
        description="Future, not-started occurrences whose instant differs under the installed tzdata "
        "(materialized instants are never rewritten), and the schedules the engine found drifted, which wait "
        "for a decision: --keep ID keeps them as materialized, --republish ID publishes the same spec as a new "
        "revision with its cutover now, so that they follow the installed tzdata. A newer Tidemark's first "
        "engine start lists here too the schedules whose materialized future it computes otherwise, with the "
        "same two decisions.",
    ),
    _ledger_command(
        "shadow",
        "compare the materialized future with what this Tidemark and tzdata compute now",
        cmd_shadow,
        _ONLY_SCHEDULE,
        arg("--days", type=day_count, metavar="N", help="compare the next N days (default: each horizon)"),
        _FORMAT,
        description="Recompute every schedule's materialized, not-started future occurrences (up to its cursor) "
        "with the installed Tidemark and tz database, and compare ids, instants, states and reasons with the "
        "ledger, in one read transaction: nothing is written. Exit status 0 when equal, 3 when they differ "
        "(each difference listed: the ledger's value -> the recomputed one), 2 for invalid input.",
    ),
)

_SECRET_NAME = arg("name", metavar="NAME", help="the secret's name, as a spec writes it: {secret: NAME}")
_SECRET = Command(
    "secret",
    "keep the values of task variables written {secret: NAME} on this host",
    names_itself=True,
    description="A task variable written {secret: NAME} is looked up on the engine's host when the task "
    "starts: in the OS keyring (service tidemark), else in secrets.json in your config folder (mode 0600). "
    "The ledger stores the reference, never the value.",
    subcommands=(
        Command(
            "set",
            "store a secret (the value from a hidden prompt, or standard input)",
            cmd_secret_set,
            description="Store the secret NAME. Its value is typed at a hidden prompt on a terminal, else read "
            "from standard input (one final line break dropped); never from the command line.",
            args=(
                _SECRET_NAME,
                # Taken only to be refused without echoing it: other users' ps sees a command line.
                arg(
                    "value",
                    nargs="?",
                    metavar="VALUE",
                    help="refused: the value is read at a hidden prompt or from standard input, never from here",
                ),
                arg("--file", action="store_true", help="keep it in the file even where a keyring is usable"),
            ),
            names_itself=True,
        ),
        Command(
            "list",
            "list the secrets' names and where each is kept (never values)",
            cmd_secret_list,
            args=(_FORMAT,),
            names_itself=True,
        ),
        Command("delete", "remove a secret", cmd_secret_delete, args=(_SECRET_NAME,), names_itself=True),
    ),
)

_ALERTS = Command(
    "alerts",
    "the ledger's default alert routes and SMTP settings; send a test alert",
    names_itself=True,
    description="Schedules whose spec has no alerts: are told through the ledger's default routes. Routes are "
    "mailto:ADDRESS (sent through the SMTP settings), an https:// URL (http:// only to this machine), or "
    "secret:NAME for one kept as a secret on each engine's host (schedctl secret set NAME).",
    subcommands=(
        _ledger_command(
            "set",
            "replace the default routes, and set how mail is sent",
            cmd_alerts_set,
            arg("routes", nargs="*", metavar="ROUTE", help="the default routes, replacing those set before"),
            arg(
                "--on",
                metavar="STATES",
                help="the states told, comma-separated: FAILED, UNKNOWN_EFFECT, MISFIRE_EXPIRED (default all three)",
            ),
            arg("--clear", action="store_true", help="remove every default route"),
            arg("--smtp-host", type=ledger_text, metavar="HOST", help="the SMTP server for mailto: routes"),
            arg("--smtp-port", type=port_number, metavar="PORT", help="its port (default 587)"),
            arg(
                "--smtp-security", choices=("starttls", "tls", "none"), help="default starttls; none only to localhost"
            ),
            arg("--smtp-user", type=ledger_text, metavar="USER", help="the user to log in as"),
            arg(
                "--smtp-password-secret",
                type=ledger_text,
                metavar="NAME",
                help="the secret holding the password, on each engine's host (never the password itself)",
            ),
            arg("--smtp-from", type=ledger_text, metavar="ADDRESS", help="the sender (default tidemark@localhost)"),
            description="Replace the ledger's default routes with ROUTE..., each told of the states in --on, and "
            "change the SMTP settings the --smtp- options give (the others keep their values).",
        ),
        _ledger_command(
            "list",
            "the default routes, the SMTP settings and the alerts not getting through",
            cmd_alerts_list,
            _FORMAT,
        ),
        _ledger_command(
            "test",
            "send one test alert to ROUTE and say what came back",
            cmd_alerts_test,
            arg("route", metavar="ROUTE", help="mailto:ADDRESS, an https:// URL, or secret:NAME"),
            arg("--timeout", type=float, default=10.0, metavar="SECONDS", help="for each network call (default 10)"),
            description="Send one test alert now (a mailto: route through the ledger's SMTP settings) and print "
            "what the route answered. Exit status 0 when it took the alert, 1 when not, 2 for a route that is none.",
        ),
    ),
)

#: Where a command that writes files writes them, and whether it may replace one.
_WRITE_FILES = (
    arg("--out", default=".", metavar="DIR", help="the folder to write into (default: here)"),
    arg("--overwrite", action="store_true", help="replace files of the same name"),
    _NOW,
)

_IMPORT = Command(
    "import",
    "write spec files from schedules kept elsewhere (a crontab, systemd timers)",
    names_itself=True,
    subcommands=(
        Command(
            "crontab",
            "write one spec file per crontab job, with cron's clock-change behaviour",
            cmd_import_crontab,
            description="Read a user crontab (the text of crontab -l) and write one spec file per job into --out, "
            "named after its scheduleId; a job that runs on either its day of the month or its day of the week "
            "becomes two. Prints, line by line, what each line became, what could not be imported and why, and "
            "for each job its runs at the zone's next gap and next fold: cron's and the spec's, side by side. "
            "Each line that cannot be read is named with its line number and the others are imported (exit 2); "
            "text that is no crontab, or a file in the way, writes nothing (exit 2).",
            args=(
                arg("file", nargs="?", default="-", metavar="FILE", help="the crontab (default: - for stdin)"),
                arg(
                    "--zone",
                    metavar="ZONE",
                    help="the zone cron ran in, for jobs with no CRON_TZ= or TZ= line above them "
                    "(default: this machine's zone)",
                ),
                *_WRITE_FILES,
            ),
            names_itself=True,
        ),
        Command(
            "systemd",
            "write the spec files of systemd timers, with systemd's clock-change behaviour",
            cmd_import_systemd,
            description="Read systemd .timer files and, beside each, the .service it starts (its Unit=, else "
            "the timer's name), and write one spec file per timer into --out (one per OnCalendar= where no one "
            "rule holds them all, and one per OnUnitActiveSec=/OnUnitInactiveSec=). Prints, timer by timer, what "
            "each setting became, what could not be imported and why, and for each calendar spec its runs at the "
            "zone's next gap and next fold: systemd's and the spec's, side by side. A timer that cannot be read, or a "
            "file in the way, writes nothing (exit 2).",
            args=(
                arg("timers", nargs="+", metavar="TIMER", help="the .timer files"),
                arg(
                    "--zone",
                    metavar="ZONE",
                    help="the zone of the machine the timers ran on, for OnCalendar= naming no zone "
                    "(default: this machine's zone)",
                ),
                *_WRITE_FILES,
            ),
            names_itself=True,
        ),
    ),
)

_EXPORT_CRONTAB = Command(
    "crontab",
    "write the nearest crontab equivalent of a spec",
    cmd_export_crontab,
    description="Write a spec as a crontab: a CRON_TZ= line, its variables and one job line, with a comment for "
    "every policy cron cannot keep. A spec cron has no equivalent for (BYSETPOS, a day counted from the month's "
    "end, every two weeks, an after_completion schedule, an interval cron's steps cannot hold) is refused with "
    "the reason, exit 2, and nothing is written.",
    args=(
        arg("spec", metavar="SPEC", help="the spec file (- for stdin)"),
        arg("--out", default="-", metavar="FILE", help="the file to write (default: - for stdout)"),
        arg("--overwrite", action="store_true", help="replace the file if it exists"),
        _NOW,
    ),
    names_itself=True,
)
_EXPORT = Command(
    "export",
    "write a spec as the nearest schedule of another kind (a crontab, systemd units)",
    names_itself=True,
    subcommands=(
        _EXPORT_CRONTAB,
        Command(
            "systemd",
            "write a spec as a systemd timer and service",
            cmd_export_systemd,
            description="Write SPEC as NAME.timer and NAME.service (NAME: its scheduleId) into --out: the nearest "
            "equivalent, with a comment in the timer for every policy systemd cannot keep. A spec with no "
            "equivalent (a rule systemd's calendar cannot say, secrets in its env) is refused with the reason "
            "(exit 2), and nothing is written.",
            args=(_SPEC, *_WRITE_FILES),
            names_itself=True,
        ),
    ),
)

#: Every command of ``schedctl``, in the order ``schedctl --help`` lists them.
COMMANDS: tuple[Command, ...] = (*_SPEC_COMMANDS, *_LEDGER_COMMANDS, _ALERTS, _SECRET, _IMPORT, _EXPORT)


# --- the builder ------------------------------------------------------------------------


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``schedctl`` (standard library only), built from :data:`COMMANDS`.

    Given the command line it is to parse, it gives its arguments only to the command that line
    names, when it names one first (``validate x.yaml``, not ``--version``): the other commands are
    still listed by ``--help`` and chosen by name, and the parse is the same, but filling all of
    them would take several milliseconds of a small command's start."""
    parser = Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action=_Version, help="print schedctl's version and exit")
    named = [c for c in COMMANDS if argv and c.name == argv[0]]
    _add_commands(parser, "command", COMMANDS, PROG, only=named[0] if named else None)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed Tidemark's version (package metadata is read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from core.version import tidemark_version

        print(f"{PROG} (Tidemark) {tidemark_version()}")
        parser.exit()


def _add_commands(
    parser: argparse.ArgumentParser, dest: str, commands: Sequence[Command], prog: str, only: Command | None = None
) -> None:
    """``commands`` as the subcommands of ``parser``; the one chosen is stored as ``dest``. With
    ``only``, the others are named and described but get no arguments (the line names ``only``)."""
    subparsers = parser.add_subparsers(dest=dest, metavar="COMMAND", parser_class=Parser)
    for command in commands:
        formatter = argparse.RawDescriptionHelpFormatter if command.keeps_lines else argparse.HelpFormatter
        sub = subparsers.add_parser(
            command.name,
            help=command.help,
            description=command.description or f"{command.help[0].upper()}{command.help[1:]}.",
            epilog=command.epilog,
            formatter_class=formatter,
        )
        if only is None or command is only:
            _fill(sub, command, f"{prog} {command.name}")


def _fill(parser: argparse.ArgumentParser, command: Command, prog: str) -> None:
    """Give ``parser`` the arguments of ``command``, what runs it, and its subcommands."""
    for item in command.args:
        if isinstance(item, OneOf):
            group = parser.add_mutually_exclusive_group(required=item.required)
            for one in item.args:
                group.add_argument(*one.names, **one.options)
        else:
            parser.add_argument(*item.names, **item.options)
    run = command.run or _choose(prog, [sub.name for sub in command.subcommands])
    parser.set_defaults(func=run)
    if command.names_itself:
        parser.set_defaults(where=prog)
    if command.subcommands:
        _add_commands(parser, f"{command.name}_command", command.subcommands, prog)


def _choose(prog: str, names: Sequence[str]) -> Run:
    """What runs a group given without its subcommand (``schedctl engine``): one line naming them."""
    choices = " or ".join(filter(None, (", ".join(names[:-1]), names[-1])))

    def missing(args: argparse.Namespace) -> int:
        raise UsageError(f"choose {choices} (see {prog} --help)")

    return missing
