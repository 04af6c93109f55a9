"""Which import reads a file: chosen by the file's type, one function for every source.

:func:`review_files` reads the files a person chose (a crontab, or timer files) with the reader
registered for their type in :data:`READERS` and returns the :class:`~core.importing.review.Review`
the window shows. A file of any other type is read as a crontab (``crontab -l`` output has no type
of its own). A source plugs in with one line: ``READERS[".timer"] = review_timers``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from datetime import datetime
from pathlib import Path

from core.errors import UserError
from core.importing.cron import ZONE_GIVEN, CrontabImport, ImportedJob, import_crontab
from core.importing.cron_changes import side_by_sides
from core.importing.crontab_file import MAX_CRONTAB_BYTES, CrontabError, crontab_text
from core.importing.input_text import BLANKS, crontab_lines
from core.importing.review import Review, ReviewJob, ReviewProblem, change_words, review_spec

Reader = Callable[[Sequence[Path], str, datetime, Set[str]], Review]
"""``(files, zone, now, taken)``: the review of the files; ``zone`` serves jobs whose file names
none, the ids avoid ``taken``. Raises :class:`ImportFileError` (or another UserError) naming the file."""

#: What each file type needs when its reader is not registered.
NEEDS: dict[str, str] = {}


class ImportFileError(UserError):
    """A file that cannot be imported; the message names it."""


def review_files(paths: Sequence[Path], *, zone: str, now: datetime, taken: Set[str] = frozenset()) -> Review:
    """What importing ``paths`` would bring in, read by the reader for their type."""
    if not paths:
        raise ImportFileError("choose a crontab or timer files to import")
    kinds = {
        path.suffix.lower() if path.suffix.lower() in READERS or path.suffix.lower() in NEEDS else "" for path in paths
    }
    if len(kinds) > 1:
        raise ImportFileError("choose one kind of file at a time: a crontab, or timer files")
    kind = kinds.pop()
    if kind in READERS:
        return READERS[kind](paths, zone, now, taken)
    if kind in NEEDS:
        raise ImportFileError(f"{paths[0].name}: {NEEDS[kind]}")
    return review_crontab(paths, zone, now, taken)


def read_bytes(path: Path, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of ``path``; a file that is missing or cannot be read is one line."""
    if path.is_dir():
        raise ImportFileError(f"{path.name}: is a folder, not {what}")
    try:
        with path.open("rb") as stream:
            return stream.read(limit)
    except FileNotFoundError:
        raise ImportFileError(f"{path.name}: no such file") from None
    except OSError as exc:
        raise ImportFileError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None


def review_crontab(paths: Sequence[Path], zone: str, now: datetime, taken: Set[str]) -> Review:
    """The review of one crontab."""
    if len(paths) != 1:
        raise ImportFileError("choose one crontab at a time")
    path = paths[0]
    try:
        text = crontab_text(read_bytes(path, MAX_CRONTAB_BYTES + 1, "a crontab"))
        result = import_crontab(text, zone=zone, now=now, taken=taken)
    except CrontabError as exc:
        raise ImportFileError(f"{path.name}: {exc}") from None
    jobs = tuple(_cron_job(job, now) for job in result.jobs)
    problems = [(u.line, ReviewProblem(f"line {u.line}", u.source, u.reason)) for u in result.unimported]
    problems += _refused(result, text)
    ordered = tuple(problem for _, problem in sorted(problems, key=lambda pair: pair[0]))
    return Review("cron", (path.name,), zone, jobs, ordered, _env_notes(result))


def _refused(result: CrontabImport, text: str) -> list[tuple[int, ReviewProblem]]:
    """The lines refused as mistakes, each with its text and why (``line 4: minute 61 is out of range``)."""
    lines = crontab_lines(text)
    found = []
    for exc in result.refused:
        where, _, reason = str(exc).partition(": ")
        number = int(where.removeprefix("line "))
        found.append((number, ReviewProblem(where, lines[number - 1].strip(BLANKS), reason)))
    return found


def _cron_job(job: ImportedJob, now: datetime) -> ReviewJob:
    specs = tuple(review_spec(s, now) for s in job.specs)
    changes = tuple(
        change_words(view, "cron") for view in side_by_sides(job.expr, [s.spec for s in job.specs], job.zone, now)
    )
    notes: list[str] = []
    if len(job.specs) > 1:
        notes.append(
            "cron runs it on its days of the month OR its days of the week; one rule cannot say that, "
            "so it becomes two schedules, together exactly cron's days"
        )
    if job.command.why_shell:
        notes.append(f"runs through {job.command.argv[0]} -c: the command has {', '.join(job.command.why_shell)}")
    first = job.specs[0]
    title = first.spec.title or first.spec.schedule_id
    if first.part is not None:
        title = title.removesuffix(f" ({first.part})")
    return ReviewJob(
        f"line {job.line}",
        job.source,
        title,
        job.zone,
        job.zone_from == ZONE_GIVEN,
        specs,
        changes[0] if changes else None,
        tuple(notes),
        changes,
    )


def _env_notes(result: CrontabImport) -> tuple[str, ...]:
    return tuple(f"line {e.line}: {e.name} is set in the task env of every job below it" for e in result.env_lines)


def review_timers(paths: Sequence[Path], zone: str, now: datetime, taken: Set[str]) -> Review:
    """The review of systemd timer files, each read with the service it starts from its own folder
    (as ``schedctl import systemd`` does). ``taken`` is not needed: a timer's id is its name."""
    from core.importing.systemd import TimerError, import_timers
    from core.importing.systemd_report import systemd_side_by_sides
    from core.importing.systemd_unit import MAX_UNIT_BYTES, UnitError, unit_text

    def text_of(path: Path) -> str:
        try:
            return unit_text(read_bytes(path, MAX_UNIT_BYTES + 1, "a unit file"))
        except UnitError as exc:
            raise ImportFileError(f"{path.name}: {exc}") from None

    folders = {path.name: path.parent for path in paths}

    def service_text(timer: str, name: str) -> str | None:
        path = folders[timer] / name
        return text_of(path) if path.is_file() else None

    try:
        result = import_timers([(p.name, text_of(p)) for p in paths], zone=zone, now=now, service_text=service_text)
    except TimerError as exc:
        raise ImportFileError(str(exc)) from None
    jobs = []
    for timer in result.timers:
        first = timer.specs[0]
        changes = tuple(change_words(view, "systemd") for view in systemd_side_by_sides(first, now))
        jobs.append(
            ReviewJob(
                timer.file,
                f"{timer.file} → {timer.service}",
                first.imported.spec.title or first.imported.spec.schedule_id,
                first.imported.spec.time_zone,
                first.zone_from == "from --zone",
                tuple(review_spec(made.imported, now) for made in timer.specs),
                changes[0] if changes else None,
                (f"{len(timer.specs):,} schedules: its triggers need more than one rule",)
                if len(timer.specs) > 1
                else (),
                changes,
            )
        )
    problems = tuple(ReviewProblem(f"{n.file} line {n.line}", n.text, n.said) for n in result.notes if not n.imported)
    return Review("systemd", tuple(result.files), zone, tuple(jobs), problems)


def _several(count: int) -> tuple[str, ...]:
    return (f"{count:,} schedules: its triggers need more than one rule",) if count > 1 else ()


#: Readers by the file's suffix; a file with another suffix is read as a crontab.
READERS: dict[str, Reader] = {".timer": review_timers}
