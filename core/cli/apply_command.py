"""``schedctl apply SPEC...``: publish one spec, several, or a folder of them (a team's workspace).

Every file is read and validated first; two files with one schedule id are
refused. Then everything the ledger would refuse is asked of every spec before
any is written (:func:`core.ledger.publish_many.publish_all`): every refusal of
every file is listed, each line starting with its file, and nothing is
published (exit 2). Otherwise the specs are published in short batches.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.common import EXIT_INVALID, EXIT_OK, Invalid, UsageError, problem_lines, read_spec, warn_credentials
from core.cli.ledger_access import command_clock, open_command_ledger
from core.cli.output import err, out, plural

if TYPE_CHECKING:
    import argparse

    from core.ledger.publish_many import Item, Outcome

#: The names a folder's spec files end with (JSON specs are named one by one).
SPEC_SUFFIXES = (".yaml", ".yml")
#: Spec files one apply reads at most.
MAX_SPECS = 10_000


def spec_paths(args: list[str]) -> tuple[list[str], list[str]]:
    """The spec files the arguments name, in order (a folder: its ``*.yaml`` and ``*.yml``
    files below it, hidden files and folders left out, by path), and a note per folder."""
    paths: list[str] = []
    notes: list[str] = []
    for arg in args:
        if arg == "-" or not Path(arg).is_dir():
            paths.append(arg)
            continue
        found = _folder_specs(arg)
        if not found:
            raise UsageError(f"{arg}: no spec files in this folder (*.yaml, *.yml; hidden ones are left out)")
        notes.append(f"read {plural(len(found), 'spec file')} from {arg}")
        paths.extend(found)
        if len(paths) > MAX_SPECS:
            break
    if len(paths) > MAX_SPECS:
        raise UsageError(f"more than {MAX_SPECS:,} spec files; apply at most {MAX_SPECS:,} at once")
    if paths.count("-") > 1:
        raise UsageError("- (standard input) may be named once")
    return paths, notes


def _folder_specs(folder: str) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(folder, onerror=_unreadable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            os.path.join(top, name)
            for name in sorted(files)
            if not name.startswith(".") and name.endswith(SPEC_SUFFIXES)
        )
        if len(found) > MAX_SPECS:
            break
    return found


def _unreadable(exc: OSError) -> None:
    raise UsageError(f"{exc.filename}: the folder cannot be read ({exc.strerror})")


def _read_all(paths: list[str]) -> list[Item]:
    """Every file read and validated; every problem of every file at once, or the items."""
    from core.ledger.publish import RevisionSource
    from core.ledger.publish_many import Item

    items: list[Item] = []
    problems: list[str] = []
    first: dict[str, str] = {}
    refused = 0
    for path in paths:
        try:
            spec = read_spec(path)
        except Invalid as exc:
            problems.extend(exc.lines)
            refused += 1
            continue
        sid = spec.schedule_id
        if sid in first:
            problems.append(f"{path}: scheduleId: {sid} is also the id in {first[sid]}; one file per schedule")
            refused += 1
            continue
        first[sid] = path
        warn_credentials(path, spec)
        # The revision remembers its file (not standard input's), so the app can tell it from a namesake.
        items.append(Item(path, spec, RevisionSource.of_file(path) if path != "-" else None))
    if problems:
        raise Invalid(problems + _nothing_published(refused, len(paths)))
    return items


def _nothing_published(refused: int, specs: int) -> list[str]:
    """The closing line of a refusal of several specs (none for one spec: its lines say it all)."""
    return [f"nothing was published: {plural(refused, 'spec')} of {specs} refused"] if specs > 1 else []


def _line(outcome: Outcome) -> str:
    from core.time.formats import fmt_utc

    result, spec = outcome.result, outcome.item.spec
    if result is None:
        return f"unchanged {spec.schedule_id} revision {spec.revision} (already published as it is)"
    head = (
        f"applied {result.schedule_id} revision {result.revision} "
        f"(cutover {fmt_utc(result.cutover_at)}, tzdb {result.tzdb_version})"
    )
    if result.created:
        return f"{head}; a new schedule"
    return f"{head}; cancelled {plural(len(result.cancelled), 'occurrence')} of earlier revisions"


def cmd_apply(args: argparse.Namespace) -> int:
    """Validate every spec, then publish each as its schedule's next revision (see the module)."""
    from core.ledger.publish_many import publish_all

    paths, notes = spec_paths(args.specs)
    items = _read_all(paths)
    zones = {item.spec.time_zone for item in items}
    # --now is read on the spec's clock when the specs share one zone, else in UTC.
    clock = command_clock(args, zones.pop()) if len(zones) == 1 else command_clock(args)
    with open_command_ledger(args, clock) as ledger:
        outcomes = publish_all(ledger, items, clock)
    refused = [o for o in outcomes if o.refused is not None]
    published = [o for o in outcomes if o.result is not None]
    lines = [line for o in refused if o.refused for line in problem_lines(o.item.name, o.refused)]
    if refused and not published:
        raise Invalid(lines + _nothing_published(len(refused), len(items)))
    for note in notes:
        out(note)
    for outcome in outcomes:
        if not outcome.left and outcome.refused is None:
            out(_line(outcome))
    if refused:  # another publisher got in part-way: what was published stays, and is unchanged next time
        for line in lines:
            err(line)
        err(
            f"published {len(published)} of {plural(len(items), 'spec')}, then stopped; "
            "apply them again once that is fixed (those published are then unchanged)"
        )
        return EXIT_INVALID
    if len(items) > 1:
        unchanged = sum(o.unchanged for o in outcomes)
        out(f"applied {len(published)} of {plural(len(items), 'spec')}; {unchanged} unchanged")
    return EXIT_OK
