"""The ledger commands: schedules, pause/resume/disable, ledger, attempts, db upgrade, drift and shadow.

Each does one unit of work on the ledger of --db (see :mod:`core.cli.ledger_access`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.common import EXIT_OK, Invalid, UsageError
from core.cli.ledger_access import command_clock, open_command_ledger, upgrade_command_ledger
from core.cli.output import out, plural, unicode_ok

if TYPE_CHECKING:
    import argparse

#: Occurrences read per query when ``ledger`` lists without --limit.
_PAGE = 1000
_GATE_WORDS = {"pause": "paused", "resume": "resumed", "disable": "disabled"}


def cmd_schedules(args: argparse.Namespace) -> int:
    """Every schedule: gate, revision, zone, next due time, occurrences by state."""
    from core.engine.presence import STALE_AFTER
    from core.ledger.queries import list_schedules
    from core.render.ledger_table import schedules_json, schedules_table

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger, ledger.read() as session:
        rows = list_schedules(session, now=clock.now(), stale_after=STALE_AFTER)
    out(schedules_json(rows) if args.format == "json" else schedules_table(rows, unicode=unicode_ok()))
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    """pause, resume or disable: move the schedule's gate, with a note."""
    from core.ledger.publish import disable, pause, resume

    action = {"pause": pause, "resume": resume, "disable": disable}[args.command]
    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger, ledger.write() as session:
        change = action(session, args.schedule_id, clock, args.note)
    if not change.changed:
        out(f"{args.schedule_id} is already {change.new.value}")
    else:
        note = f": {args.note}" if args.note else ""
        out(f"{_GATE_WORDS[args.command]} {args.schedule_id} (was {change.old.value}){note}")
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
    """Occurrences in position order (positionUtc, nominalLocal, foldOrdinal), filtered.

    Long stretches of missed occurrences recorded as expired ranges (after an
    outage) follow the table, one line each; in JSON they are ``expiredRanges``.
    """
    from core.ledger.expired import list_expired_ranges
    from core.ledger.publish import get_schedule
    from core.ledger.queries import OccurrenceFilter, count_occurrences, list_occurrences
    from core.ledger.states import OccurrenceState
    from core.render.ledger_table import occurrences_json, occurrences_table

    states = _states(args.state) if args.state is not None else None
    where = OccurrenceFilter(schedule_id=args.schedule, states=states)
    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger, ledger.read() as session:
        if args.schedule is not None:
            get_schedule(session, args.schedule)
        ranges: list[Any] = []
        if states is None or OccurrenceState.MISFIRE_EXPIRED in states:
            ranges = list_expired_ranges(session, args.schedule)
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
        # The schedule asked about; with --state, those of the rows shown; else every schedule (one
        # that waits for an engine often has no occurrence yet).
        about = {args.schedule} if args.schedule else {r.schedule_id for r in rows} if states is not None else None
        waiting = _who_waits(session, clock.now(), about)
    if args.format == "json":
        text = occurrences_json(rows)
        if ranges or waiting:
            import json

            document = json.loads(text)
            if ranges:
                document["expiredRanges"] = [r.to_json() for r in ranges]
            if waiting:
                document["waiting"] = waiting
            text = json.dumps(document, indent=2, ensure_ascii=False)
        out(text)
    else:
        text = occurrences_table(rows, total=total, unicode=unicode_ok())
        if ranges:
            heading = f"\n{plural(len(ranges), 'expired range')} (missed occurrences recorded as one entry each):"
            text = text.rstrip("\n") + "\n" + "\n".join([heading, *(f"  {r.summary()}" for r in ranges)])
        if waiting:
            text = text.rstrip("\n") + "\n" + "\n".join(f"{sid}: {why}" for sid, why in waiting.items()) + "\n"
        out(text)
    return EXIT_OK


def _who_waits(session: Any, now: Any, schedule_ids: set[str] | None) -> dict[str, str]:
    """Why each of ``schedule_ids`` (None: every schedule) waits, for an engine with its labels or one
    that trusts its publisher, or is held, as ``schedctl schedules`` says it; the others are left out."""
    from core.engine.presence import STALE_AFTER
    from core.ledger.queries import list_schedules

    if schedule_ids is not None and not schedule_ids:
        return {}
    said = {}
    for s in list_schedules(session, now=now, stale_after=STALE_AFTER):
        why = s.waiting or s.held
        if why and (schedule_ids is None or s.schedule_id in schedule_ids):
            said[s.schedule_id] = why
    return said


def cmd_attempts(args: argparse.Namespace) -> int:
    """Every attempt of one occurrence, oldest first."""
    from sqlalchemy import select

    from core.ledger.models import Attempt
    from core.ledger.queries import get_occurrence
    from core.render.ledger_table import attempts_json, attempts_table

    with open_command_ledger(args, command_clock(args), create=False) as ledger, ledger.read() as session:
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
            text = attempts_table(occurrence, attempts, unicode=unicode_ok())
    out(text)
    return EXIT_OK


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Migrate the ledger's schema to the newest this Tidemark knows."""
    revision = upgrade_command_ledger(args)
    out(f"ledger schema at revision {revision} (the newest this Tidemark knows)")
    return EXIT_OK


def cmd_drift(args: argparse.Namespace) -> int:
    """Future occurrences the installed tz database would place at another instant, and
    the schedules waiting for a decision about them; ``--keep`` or ``--republish`` decides."""
    from core.ledger.drift_attention import drift_attention
    from core.ledger.materialize import drift
    from core.ledger.publish import get_schedule
    from core.time.zones import tzdb_version

    if args.note is not None and args.keep is None:
        raise UsageError("--note: goes with --keep (a republished revision is its own record)")
    if args.keep is not None or args.republish is not None:
        return _drift_decision(args)
    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger, ledger.read() as session:
        if args.schedule is not None:
            get_schedule(session, args.schedule)
        items = drift(session, clock, args.schedule)
        waiting = [w for w in drift_attention(session) if args.schedule in (None, w.schedule_id)]
    lines = _drift_lines(items, tzdb_version())
    for w in waiting:
        lines.append(
            f"{w.schedule_id} waits for a decision: {w.text} "
            f"(schedctl drift --keep {w.schedule_id}, or --republish {w.schedule_id})"
        )
    out("\n".join(lines))
    return EXIT_OK


def _drift_lines(items: list[Any], release: str) -> list[str]:
    from core.time.formats import fmt_utc

    if not items:
        return [f"no drift: every future occurrence keeps its instant under the installed tzdb {release}"]
    arrow = "→" if unicode_ok() else "->"
    lines = [f"{plural(len(items), 'future occurrence')} would move under the installed tzdb {release}:"]
    for item in items:
        old = fmt_utc(item.stored_resolved_utc) if item.stored_resolved_utc else "no instant"
        new = fmt_utc(item.current_resolved_utc) if item.current_resolved_utc else "no instant"
        status = f" ({item.current_status.value})" if item.current_status is not None else " (no longer exists)"
        lines.append(
            f"  {item.occurrence_id} {item.schedule_id} revision {item.revision} {item.nominal_local}"
            f"#{item.fold_ordinal}: {old} (tzdb {item.stored_tzdb_version}{_holidays_words(item)}) "
            f"{arrow} {new}{status}"
        )
    lines.append("publish a new revision to adopt them; materialized instants are never rewritten")
    return lines


def _holidays_words(item: Any) -> str:
    """``, holidays 0.60; installed 0.61`` when another holidays release decided the occurrence's date."""
    stored, current = item.stored_holidays_version, item.current_holidays_version
    if stored is None or stored == current:
        return ""
    return f", holidays {stored}; installed {current}"


def _drift_decision(args: argparse.Namespace) -> int:
    """``drift --keep ID`` or ``drift --republish ID``: one recorded decision."""
    from core.errors import PublishError
    from core.ledger.drift_attention import keep_materialized, republish, republish_outlook
    from core.time.formats import fmt_utc

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger:
        if args.keep is not None:
            item = keep_materialized(ledger, args.keep, clock, args.note)
            why = (
                f"Tidemark {item.engine_version} computes them otherwise"
                if item.new_code
                else f"tzdb {item.tzdb_version} would move them"
            )
            runs = plural(item.occurrences, "run" if item.new_code else "drifted run")
            out(f"kept {runs} of {args.keep} as materialized ({why})")
            return EXIT_OK
        with ledger.read() as session:
            _item, diff = republish_outlook(session, args.republish, clock.now())
        try:
            result = republish(ledger, args.republish, clock)
        except PublishError as exc:
            raise Invalid([f"{args.republish}: {line}" for line in str(exc).splitlines()]) from None
    out(
        f"republished {result.schedule_id} as revision {result.revision} under tzdb {result.tzdb_version} "
        f"(cutover {fmt_utc(result.cutover_at)}): {plural(len(diff.moves), 'run')} move, "
        f"{len(diff.appear)} appear, {len(diff.vanish)} vanish; "
        f"cancelled {plural(len(result.cancelled), 'occurrence')} to be planned again"
    )
    return EXIT_OK


#: ``shadow``'s exit status when the installed code or tz data compute the future otherwise.
EXIT_DIFFERENT = 3


def cmd_shadow(args: argparse.Namespace) -> int:
    """Recompute the materialized future with the installed code and tz data and compare it
    with the ledger, in one read transaction: exit 0 when equal, 3 when it differs."""
    from core.ledger.shadow import shadow
    from core.render.shadow_table import shadow_json, shadow_table

    clock = command_clock(args)
    with open_command_ledger(args, clock, create=False) as ledger, ledger.read() as session:
        if args.schedule is not None:
            from core.ledger.publish import get_schedule

            get_schedule(session, args.schedule)
        report = shadow(session, clock, days=args.days, schedule_ids=[args.schedule] if args.schedule else ())
    out(shadow_json(report) if args.format == "json" else shadow_table(report, unicode=unicode_ok()))
    return EXIT_OK if report.equal else EXIT_DIFFERENT


def _kinds(text: str) -> frozenset[str]:
    """``--kind schedule.paused,ledger.fenced`` as event kinds; an unknown one is one line naming them all."""
    from core.ledger.event_types import EventKind

    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    known = {kind.value for kind in EventKind}
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        what = f"unknown kind {', '.join(repr(n) for n in unknown)}" if unknown else "no kind given"
        raise UsageError(f"--kind: {what}; the kinds are {', '.join(kind.value for kind in EventKind)}")
    return frozenset(names)


def cmd_events(args: argparse.Namespace) -> int:
    """The audit log: each event's time, actor, what happened and its note, oldest first,
    written as it is read (a long log is never held whole)."""
    import sys
    from datetime import UTC

    from core.cli.arguments import parse_time
    from core.cli.output import terminal_safe_stream
    from core.ledger.audit_queries import AuditFilter, audit_events, check_filter, widest
    from core.render.events_table import column_widths, write_events_json, write_events_table
    from core.time.zones import get_zone

    since = parse_time(args.since, "--since", get_zone("UTC")).astimezone(UTC) if args.since is not None else None
    kinds = _kinds(args.kind) if args.kind is not None else frozenset()
    where = AuditFilter(args.schedule, args.occurrence, since, kinds)
    with open_command_ledger(args, command_clock(args), create=False) as ledger, ledger.read() as session:
        check_filter(session, where)
        found = audit_events(session, where, limit=args.limit)
        stream = terminal_safe_stream(sys.stdout)
        if args.format == "json":
            write_events_json(found, stream)
        else:
            widths = column_widths(*widest(session, where, limit=args.limit))
            write_events_table(found, stream, unicode=unicode_ok(), widths=widths)
    return EXIT_OK
