"""The spec commands: validate, preview, explain and schema; none of them touches a ledger."""

from __future__ import annotations

import itertools
import operator
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING

from core.cli.arguments import current_time, parse_time
from core.cli.common import (
    DEFAULT_COUNT,
    EXIT_INVALID,
    EXIT_OK,
    Invalid,
    UsageError,
    problem_lines,
    read_spec,
    warn_credentials,
)
from core.cli.output import can_encode, err, out, stdout_is_terminal, terminal_safe_stream, use_colour

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

    from core.recurrence.compile import CompiledSchedule


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every file; ``ok`` per valid one on stdout, problems on stderr."""
    failed = False
    for path in args.specs:
        try:
            spec = read_spec(path)
        except Invalid as exc:
            failed = True
            for line in exc.lines:
                err(line)
            continue
        warn_credentials(path, spec)
        out("ok")
    return EXIT_INVALID if failed else EXIT_OK


def cmd_preview(args: argparse.Namespace) -> int:
    """The rows of docs/contract.md §2 from --from on, in the chosen format, written as they are produced."""
    from core.errors import UserError
    from core.recurrence.compile import compile_schedule
    from core.recurrence.preview import MAX_PREVIEW_ROWS, stream_preview
    from core.render import needs_ids, write

    spec = read_spec(args.spec)
    try:
        compiled = compile_schedule(spec)
    except UserError as exc:
        raise Invalid(problem_lines(args.spec, exc)) from None
    zone = compiled.zone
    now = current_time(args, zone)
    start = parse_time(args.from_, "--from", zone) if args.from_ is not None else now
    if args.count is not None and args.count > MAX_PREVIEW_ROWS:
        raise UsageError(f"--count: at most {MAX_PREVIEW_ROWS:,} rows, got {args.count:,}")
    wanted = args.count or DEFAULT_COUNT
    ids = needs_ids(args.format)
    until: datetime | None = None
    try:
        if args.until is not None:
            until = parse_time(args.until, "--until", zone)
            if until <= start:
                raise UsageError(
                    f"--until: {args.until!r} is not after the start of the preview ({start:%Y-%m-%dT%H:%M:%SZ})"
                )
            stream = stream_preview(spec, start, until=until, compiled=compiled, ids=ids)
        else:
            stream = stream_preview(spec, start, count=wanted, compiled=compiled, ids=ids)
    except UserError as exc:
        raise Invalid(problem_lines(args.spec, exc)) from None
    counter = itertools.count()  # the rows written, counted in C as they pass
    stream.rows = map(operator.itemgetter(0), zip(stream.rows, counter, strict=False))
    unicode = can_encode("✓↷⊘②─—→·")
    colour = use_colour() and args.format == "table"
    # The table, json and csv make their own free texts terminal-safe; a calendar is made so on its way out.
    target = terminal_safe_stream(sys.stdout) if args.format == "ics" else sys.stdout
    write(stream, args.format, target, color=colour, unicode=unicode, stamp=now, safe=True)
    if (args.until is not None or next(counter) < wanted) and _reaches_calendar_end(compiled, start, until):
        err(f"{args.spec}: note: the calendar ends with the year 9999; no later rows exist")
    return EXIT_OK


def _reaches_calendar_end(compiled: CompiledSchedule, start: datetime, until: datetime | None) -> bool:
    """Whether a preview that wrote every row from ``start`` (before ``until``) wrote one at the
    calendar's last instants: then it ended with the calendar, not with the schedule."""
    from core.recurrence.expand import iter_rows
    from core.time.zones import LAST_INSTANT

    if until is not None and until <= LAST_INSTANT:
        return False
    row = next(iter_rows(compiled, max(start, LAST_INSTANT), ids=False), None)
    return row is not None and (until is None or row.position < until)


def cmd_explain(args: argparse.Namespace) -> int:
    """One paragraph: the rule, the zone, and what the policies do at the next gap and fold."""
    from core.errors import UserError
    from core.explain.summary import explain
    from core.time.zones import get_zone

    spec = read_spec(args.spec)
    zone = get_zone(spec.time_zone)
    now = current_time(args, zone)
    start = parse_time(args.from_, "--from", zone) if args.from_ is not None else now
    wake = None
    if spec.wake_system:
        from core.desktop.wake.probe import host_backend  # subprocess and the OS probes, only for wakeSystem

        wake = host_backend()
    try:
        text = explain(spec, start, wake=wake)
    except UserError as exc:
        raise Invalid(problem_lines(args.spec, exc)) from None
    except OverflowError:  # a search that would leave the calendar, where nothing narrowed it first
        raise Invalid([f"{args.spec}: the explanation reaches past the calendar (years 1 to 9999)"]) from None
    if stdout_is_terminal():
        text = textwrap.fill(text, width=max(40, min(100, shutil.get_terminal_size().columns - 1)))
    out(text)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """The JSON Schema of scheduleSpec.v1, for editors."""
    import json

    from core.spec.model import json_schema

    out(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    return EXIT_OK


def cmd_demos(args: argparse.Namespace) -> int:
    """The demo schedules this installation ships: each name and file, or the file of the one named."""
    from core.desktop.bundled import demo_files

    demos = demo_files()
    if args.name is not None:
        if args.name not in demos:
            raise UsageError(f"no demo schedule named {args.name!r} (the demos: {', '.join(demos)})")
        out(str(demos[args.name]))
        return EXIT_OK
    width = max(map(len, demos), default=0)
    out("\n".join(f"{name:<{width}}  {path}" for name, path in demos.items()))
    return EXIT_OK
