"""``schedctl import crontab``: a user crontab as spec files, one per job, and the report of what
each line became. Nothing is written unless the whole crontab reads and no file is in the way."""

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
    path = Path(source)
    if not path.exists():
        raise Invalid([f"{source}: no such file"])
    if path.is_dir():
        raise Invalid([f"{source}: is a directory, not a crontab"])
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


def write_new(path: Path, text: str, *, overwrite: bool) -> None:
    """Write ``text`` as ``path`` in one step: whole or not at all, and never over a file that
    appeared meanwhile unless ``overwrite``."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
        if overwrite:
            os.replace(temp, path)
        else:
            os.link(temp, path)  # refuses when the name is taken, unlike a rename
    finally:
        Path(temp).unlink(missing_ok=True)


def cmd_import_crontab(args: argparse.Namespace) -> int:
    """Read the crontab, write one spec per job into --out, print the report."""
    from core.errors import ZoneError
    from core.importing.cron import import_crontab
    from core.importing.cron_report import report_lines
    from core.importing.crontab_file import CrontabError, crontab_text
    from core.zones import check_zone_name, get_zone

    name = "<stdin>" if args.file == "-" else args.file
    if args.zone is not None:
        try:
            check_zone_name(args.zone)
        except ZoneError as exc:
            raise UsageError(f"--zone: {exc}") from None
    now = current_time(args, get_zone("UTC"))
    out_dir = _out_dir(args.out)
    try:
        result = import_crontab(crontab_text(_crontab_bytes(args.file)), zone=args.zone, now=now)
    except CrontabError as exc:
        raise Invalid([f"{name}: {exc}"]) from None
    files = [(out_dir / s.file_name, s.text) for job in result.jobs for s in job.specs]
    if not args.overwrite:
        taken = [str(path) for path, _ in files if path.exists()]
        if taken:
            raise Invalid([f"{path}: already exists; give --overwrite, or another --out" for path in taken])
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, text in files:
        try:
            write_new(path, text, overwrite=args.overwrite)
        except FileExistsError:
            raise Invalid([f"{path}: appeared while importing; nothing after it was written"]) from None
    for line in report_lines(result, now):
        out(line)
    if files:
        out(f"written to {out_dir}")
    return EXIT_OK
