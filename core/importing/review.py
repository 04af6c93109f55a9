"""What an import would bring in, as data for a person to review before anything is written:
each job with its specs (their YAML text, their rule in words, their next runs), its runs at
the zone's next clock change beside the old scheduler's, and every line that cannot be imported
and why. The window's File ▸ Import… shows it; :func:`save_into` writes the chosen specs.

A source (a crontab, timer files) turns its own import result into a :class:`Review`
(:mod:`core.importing.sources` chooses the source by the file's type); everything here is the
same for every source.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from core.explain.change_words import day_label, jump_words, zone_word
from core.importing.cron import ImportedSpec
from core.importing.cron_changes import SideBySide, run_words
from core.recurrence.compile import compile_schedule
from core.recurrence.describe import describe_rule
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import build_preview
from core.time.formats import fmt_clock
from core.time.zones import get_zone

#: Next runs shown under each spec.
PREVIEW_ROWS = 3
#: Files named ``<id>-2.yaml``, ``<id>-3.yaml``… at most, when the name is taken meanwhile.
_MOST_NAMES = 1_000


@dataclass(frozen=True)
class ReviewSpec:
    """One spec a job becomes: the file it would be, its rule in words and its next runs."""

    imported: ImportedSpec
    words: str
    rows: tuple[Occurrence, ...]

    @property
    def file_name(self) -> str:
        return self.imported.file_name

    @property
    def text(self) -> str:
        return self.imported.text


@dataclass(frozen=True)
class ChangeWords:
    """The side-by-side at the next clock change in words: ``heading`` says the change, ``line``
    what the old scheduler did and what the spec will do ("cron: 03:00 EDT … · Tidemark: …")."""

    heading: str
    line: str
    same: bool
    view: SideBySide


@dataclass(frozen=True)
class ReviewJob:
    """A job that can be imported: where it was (``line 4``, ``backup.timer``), its text, its title,
    its zone (``zone_given``: the zone given to the import, the file naming none), and its specs."""

    where: str
    source: str
    title: str
    zone: str
    zone_given: bool
    specs: tuple[ReviewSpec, ...]
    change: ChangeWords | None
    notes: tuple[str, ...] = ()
    #: The side-by-side at the zone's next gap and next fold, in the order they come (``change`` is the first).
    changes: tuple[ChangeWords, ...] = ()


@dataclass(frozen=True)
class ReviewProblem:
    """A line (or setting) that is not imported, and why."""

    where: str
    source: str
    reason: str


@dataclass(frozen=True)
class Review:
    """Everything one import would bring in: the jobs, the lines it cannot, and notes on the rest."""

    source: str  # the old scheduler's name: "cron"
    files: tuple[str, ...]
    zone: str  # the zone given for jobs whose file names none
    jobs: tuple[ReviewJob, ...]
    problems: tuple[ReviewProblem, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def needs_zone(self) -> bool:
        """True when some job runs in the given zone: its file named none."""
        return any(job.zone_given for job in self.jobs)


def review_spec(imported: ImportedSpec, now: datetime, rows: int = PREVIEW_ROWS) -> ReviewSpec:
    """The spec's rule in words and its first ``rows`` rows from ``now`` on."""
    spec = imported.spec
    compiled = compile_schedule(spec)
    if compiled.parsed is not None and spec.start is not None:
        words = describe_rule(compiled.parsed, spec.start)
    else:  # an interval or an after-completion schedule: its kind says it
        words = spec.kind.value
    preview = build_preview(spec, now, count=rows, compiled=compiled)
    return ReviewSpec(imported, words, tuple(preview.rows))


def _at(instant: datetime, view: SideBySide, moved: bool = False) -> str:
    local = instant.astimezone(get_zone(view.zone))
    offset = local.utcoffset() or timedelta(0)
    text = f"{fmt_clock(local)} {zone_word(local.tzname() or '', offset, '')}"
    if moved and instant == view.change.utc:
        text += " right after the change"
    return text


def _runs(runs: Sequence[datetime], view: SideBySide, moved: bool) -> str:
    """Every run, none left out (a long stretch a step apart is one item); "right after the change"
    only where the run stands for a skipped time (cron's fixed-time jobs, ``SHIFT_FORWARD``)."""
    if not runs:
        return "no run"
    return "runs at " + ", ".join(run_words(runs, get_zone(view.zone), lambda run: _at(run, view, moved)))


def change_words(view: SideBySide, source: str) -> ChangeWords:
    """The side-by-side of :mod:`core.importing.cron_changes` as one heading and one line;
    ``source`` names the old scheduler (``cron``)."""
    change = view.change
    hours = change.seconds / 3600
    day = change.local_before if change.kind == "gap" else change.local_after
    heading = (
        f"Next clock change, {day_label(day)}: {jump_words(change, day)} ({hours:g} h); "
        f"runs from {_at(change.utc - change.delta, view)} to {_at(change.utc + change.delta, view)}"
    )
    line = f"{source}: {_runs(view.cron, view, view.cron_moved)} · Tidemark: {_runs(view.spec, view, view.spec_moved)}"
    line += " · the same" if view.same else " · they differ"
    return ChangeWords(heading, line, view.same, view)


class SaveError(OSError):
    """A spec file could not be written; the message names it."""


def save_into(folder: Path, chosen: Iterable[ReviewSpec]) -> list[Path]:
    """Write each chosen spec's text into ``folder`` under its file name, or ``<stem>-2.yaml``…
    when that name is taken: never over a file, each written whole or not at all. Returns the
    paths written; a failure stops there and raises :class:`SaveError` (the files before it stay)."""
    written: list[Path] = []
    for spec in chosen:
        try:
            written.append(_write_free(folder, spec.file_name, spec.text))
        except OSError as exc:
            raise SaveError(f"{folder / spec.file_name}: cannot be written ({exc.strerror or exc})") from None
    return written


def _write_free(folder: Path, name: str, text: str) -> Path:
    stem, suffix = Path(name).stem, Path(name).suffix
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".importing")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        for n in range(1, _MOST_NAMES + 1):
            target = folder / (name if n == 1 else f"{stem}-{n}{suffix}")
            try:
                os.link(temp, target)  # refuses a name that is taken, unlike a rename
            except FileExistsError:
                continue
            return target
        raise FileExistsError(f"{name} and {_MOST_NAMES - 1} names after it are taken")
    finally:
        Path(temp).unlink(missing_ok=True)
