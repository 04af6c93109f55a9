"""The spec commands: validate, preview, explain and schema; none of them touches a ledger."""

from __future__ import annotations

import shutil
import textwrap
from typing import TYPE_CHECKING

from core.cli.arguments import current_time, parse_time
from core.cli.common import DEFAULT_COUNT, EXIT_INVALID, EXIT_OK, Invalid, UsageError, problem_lines, read_spec
from core.cli.output import can_encode, err, out, stdout_is_terminal, use_colour

if TYPE_CHECKING:
    import argparse


def cmd_validate(args: argparse.Namespace) -> int:
    """Check every file; ``ok`` per valid one on stdout, problems on stderr."""
    failed = False
    for path in args.specs:
        try:
            read_spec(path)
        except Invalid as exc:
            failed = True
            for line in exc.lines:
                err(line)
            continue
        out("ok")
    return EXIT_INVALID if failed else EXIT_OK


def cmd_preview(args: argparse.Namespace) -> int:
    """The rows of CONTRACT §2 from --from on, in the chosen format."""
    from core.errors import UserError
    from core.preview import MAX_PREVIEW_ROWS, build_preview
    from core.recurrence.compile import compile_schedule
    from core.render import render

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
        raise Invalid(problem_lines(args.spec, exc)) from None
    unicode = can_encode("✓↷⊘②─—→·")
    colour = use_colour() and args.format == "table"
    out(render(preview, args.format, color=colour, unicode=unicode, stamp=now), coloured=colour)
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """One paragraph: the rule, the zone, and what the policies do at the next gap and fold."""
    from core.errors import UserError
    from core.explain import explain
    from core.zones import get_zone

    spec = read_spec(args.spec)
    zone = get_zone(spec.time_zone)
    now = current_time(args, zone)
    start = parse_time(args.from_, "--from", zone) if args.from_ is not None else now
    try:
        text = explain(spec, start)
    except UserError as exc:
        raise Invalid(problem_lines(args.spec, exc)) from None
    if stdout_is_terminal():
        text = textwrap.fill(text, width=max(40, min(100, shutil.get_terminal_size().columns - 1)))
    out(text)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """The JSON Schema of scheduleSpec.v1, for editors."""
    import json

    from core.spec import json_schema

    out(json.dumps(json_schema(), indent=2, ensure_ascii=False))
    return EXIT_OK
