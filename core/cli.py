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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from core.errors import UserError
    from core.spec import ScheduleSpec

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
DEFAULT_COUNT = 10

_TIME_HELP = """\
Times (--from, --until, --now) are either an instant with Z or an offset
(2026-03-08T07:00:00Z, 2026-03-08T02:00:00-05:00), or a local date-time or
date (2026-03-08T02:30, 2026-03-08) read on the wall clock of the schedule's
timeZone. A local time that happens twice means its first reading; one that
does not exist (clocks jump over it) means the moment the clocks jump.
"""
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


# --- the parser -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``schedctl`` (standard library only)."""
    parser = _Parser(
        prog="schedctl",
        description="Tidemark's command line: check, preview and explain schedules.",
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
    return parser


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
        print("schedctl: choose a command: validate, preview, explain or schema (see schedctl --help)", file=sys.stderr)
        return EXIT_INVALID
    try:
        return func(args)
    except _Invalid as exc:
        for line in exc.lines:
            print(line, file=sys.stderr)
        return EXIT_INVALID
    except UsageError as exc:
        print(f"schedctl {args.command}: {exc}", file=sys.stderr)
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
            path = getattr(args, "spec", "schedctl")
            for line in _problem_lines(path, exc):
                print(line, file=sys.stderr)
            return EXIT_INVALID
        return _internal_error(exc)


if __name__ == "__main__":
    raise SystemExit(main())
