"""``schedctl import crontab`` and ``schedctl import systemd``: a user crontab or systemd timers as
spec files, and the report of what each line became. Nothing is written unless the whole input
reads and no file is in the way."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.arguments import current_time
from core.cli.common import EXIT_OK, Invalid, UsageError
from core.cli.output import out

if TYPE_CHECKING:
    import argparse


def _crontab_bytes(source: str) -> bytes:
    from core.importing.crontab_file import MAX_CRONTAB_BYTES

    limit = MAX_CRONTAB_BYTES + 1
    if source == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream with no bytes beneath it
            return sys.stdin.read(limit).encode("utf-8", "surrogatepass")
        return bytes(stream.read(limit))
    return read_limited(source, limit, "a crontab")


def read_limited(source: str, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of the file ``source``; a missing or unreadable file is one line."""
    path = Path(source)
    if not path.exists():
        raise Invalid([f"{source}: no such file"])
    if path.is_dir():
        raise Invalid([f"{source}: is a directory, not {what}"])
    try:
        with path.open("rb") as stream:
            return stream.read(limit)
    except OSError as exc:
        raise Invalid([f"{source}: cannot be read ({exc.strerror})"]) from None


def _out_dir(text: str) -> Path:
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out: {text} is a file, not a folder")
    return path


def _temporary(path: Path, text: str) -> str:
    """``text`` in a new temporary file beside ``path`` (mkstemp: a fresh name, never a link); its name."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return temp


def _place(temp: str, path: Path, *, overwrite: bool) -> None:
    """The temporary as ``path``: a rename replaces whatever has the name (a symlink itself, never
    what it points to); a hard link refuses a name that is taken, unlike a rename."""
    if overwrite:
        os.replace(temp, path)
    else:
        os.link(temp, path)


def write_new(path: Path, text: str, *, overwrite: bool) -> None:
    """Write ``text`` as ``path`` in one step: whole or not at all, and never over a file that
    appeared meanwhile unless ``overwrite``."""
    temp = _temporary(path, text)
    try:
        _place(temp, path, overwrite=overwrite)
    finally:
        Path(temp).unlink(missing_ok=True)


def cmd_import_crontab(args: argparse.Namespace) -> int:
    """Read the crontab, write one spec per job into --out, print the report."""
    from core.importing.cron import import_crontab
    from core.importing.cron_report import report_lines
    from core.importing.crontab_file import CrontabError, crontab_text
    from core.time.zones import get_zone

    name = "<stdin>" if args.file == "-" else args.file
    zone, zone_from = _zone_option(args.zone)
    now = current_time(args, get_zone("UTC"))
    out_dir = _out_dir(args.out)
    try:
        text = crontab_text(_crontab_bytes(args.file))
        result = import_crontab(text, zone=zone, now=now, zone_from=zone_from)
    except CrontabError as exc:
        raise Invalid([f"{name}: {exc}"]) from None
    refused = [f"{name}: {exc}" for exc in result.refused]
    files = [(out_dir / s.file_name, s.text) for job in result.jobs for s in job.specs]
    if refused and not files:
        raise Invalid(refused)
    status = write_and_report(files, out_dir, report_lines(result, now), overwrite=args.overwrite)
    if refused:  # the good lines are written; the others are named, each on its line, and the status says so
        raise Invalid(refused)
    return status


def write_and_report(files: list[tuple[Path, str]], out_dir: Path, report: list[str], *, overwrite: bool) -> int:
    """Write the files (all or none), then print the report and where they went."""
    write_all(files, out_dir, overwrite=overwrite)
    for line in report:
        out(line)
    if files:
        out(f"written to {out_dir}")
    return EXIT_OK


def write_all(files: list[tuple[Path, str]], out_dir: Path, *, overwrite: bool) -> None:
    """Write every file, or none: each name is checked first (taken, even by a dangling symlink,
    unless ``overwrite``; a folder in the way), then every file is written as a temporary beside
    its name, then each is put in place; a name taken meanwhile removes the ones this call put.
    With none to write, the folder is not made either."""
    if not files:
        return
    in_the_way = [f"{path}: is a folder; nothing was written" for path, _ in files if path.is_dir()]
    if not overwrite:
        taken = [path for path, _ in files if os.path.lexists(path) and not path.is_dir()]
        in_the_way += [f"{path}: already exists; give --overwrite, or another --out" for path in taken]
    if in_the_way:
        raise Invalid(in_the_way)
    temps: list[str] = []
    placed: list[Path] = []
    current = out_dir
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for current, text in files:
            temps.append(_temporary(current, text))
        for (current, _), temp in zip(files, temps, strict=True):
            _place(temp, current, overwrite=overwrite)
            placed.append(current)
    except OSError as exc:
        if not overwrite:
            for path in placed:
                path.unlink(missing_ok=True)
            placed = []
        why = "appeared while writing" if isinstance(exc, FileExistsError) else f"cannot be written ({exc.strerror})"
        done = f"{', '.join(map(str, placed))} already replaced" if placed else "nothing was written"
        raise Invalid([f"{current}: {why}; {done}"]) from None
    finally:
        for temp in temps:
            Path(temp).unlink(missing_ok=True)


def _unit_text(source: str) -> str:
    from core.importing.systemd_unit import MAX_UNIT_BYTES, UnitError, unit_text

    try:
        return unit_text(read_limited(source, MAX_UNIT_BYTES + 1, "a unit file"))
    except UnitError as exc:
        raise Invalid([f"{source}: {exc}"]) from None


def _service_text(timer: str, name: str) -> str | None:
    path = Path(timer).parent / name
    return _unit_text(str(path)) if path.is_file() else None


def _zone_option(zone: str | None) -> tuple[str, str]:
    """The zone of the jobs whose file names none, and where it came from: --zone, else the
    machine's zone (the one the old scheduler ran them in)."""
    from core.errors import ZoneError
    from core.importing.cron import ZONE_GIVEN, ZONE_MACHINE
    from core.time.zone_info import system_zone_name
    from core.time.zones import check_zone_name

    if zone is None:
        return system_zone_name(), ZONE_MACHINE
    try:
        return check_zone_name(zone), ZONE_GIVEN
    except ZoneError as exc:
        raise UsageError(f"--zone: {exc}") from None


def cmd_import_systemd(args: argparse.Namespace) -> int:
    """Read the timers and their services, write their specs into --out, print the report."""
    from core.importing.systemd import TimerError, import_timers
    from core.importing.systemd_report import report_lines
    from core.time.zones import get_zone

    zone, zone_from = _zone_option(args.zone)
    now = current_time(args, get_zone("UTC"))
    out_dir = _out_dir(args.out)
    for name in args.timers:
        if not name.endswith(".timer"):
            raise Invalid([f"{name}: not a .timer file"])
    timers = [(name, _unit_text(name)) for name in args.timers]
    try:
        result = import_timers(timers, zone=zone, now=now, service_text=_service_text, zone_from=zone_from)
    except TimerError as exc:
        raise Invalid([str(exc)]) from None
    files = [(out_dir / m.imported.file_name, m.imported.text) for timer in result.timers for m in timer.specs]
    return write_and_report(files, out_dir, report_lines(result, now), overwrite=args.overwrite)
