"""The workspace folder: which schedules it holds, the demo templates, a new
blank schedule, and the ids in use there. Plain Python (no Qt), so the
sidebar's model stays thin.
"""

from __future__ import annotations

import re
import shutil
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.clock import Clock
from core.desktop.bundled import demo_dir
from core.errors import UserError
from core.spec.files import load_text, read_spec_text
from core.spec.model import SCHEDULE_ID
from core.time.zones import get_zone

#: The demo schedules shipped with the app; they double as templates.
DEMO_DIR = demo_dir()
SPEC_SUFFIXES = (".yaml", ".yml")
#: The title of File ▸ New's schedule (its id is this title's).
NEW_TITLE = "New schedule"


@dataclass(frozen=True)
class SpecEntry:
    """One spec file of the workspace, as much as could be read of it."""

    path: Path
    schedule_id: str | None
    title: str | None
    kind: str | None
    #: Why the file could not be read, or None.
    problem: str | None = None

    @property
    def label(self) -> str:
        return self.schedule_id or self.path.stem


#: Entries already read, by path, with the file's (mtime, size) when read.
_ENTRIES: dict[Path, tuple[tuple[int, int], SpecEntry]] = {}


def read_entry(path: Path) -> SpecEntry:
    """The headline of one spec file; an unreadable file is listed with its problem.

    A file unchanged since it was last read (same modification time and size) is not parsed again.
    """
    try:
        info = path.stat()
        stamp = (info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = (-1, -1)
    known = _ENTRIES.get(path)
    if known is not None and known[0] == stamp and stamp != (-1, -1):
        return known[1]
    entry = _read_entry(path)
    _ENTRIES[path] = (stamp, entry)
    return entry


def _read_entry(path: Path) -> SpecEntry:
    try:
        data = load_text(read_spec_text(path), path.name)
    except UserError as exc:
        return SpecEntry(path, None, None, None, str(exc))
    if not isinstance(data, dict):
        return SpecEntry(path, None, None, None, f"{path.name}: not a mapping of keys to values")

    def text(key: str) -> str | None:
        value = data.get(key)
        return str(value) if value is not None else None

    return SpecEntry(path, text("scheduleId"), text("title"), text("kind"))


def list_specs(folder: Path) -> list[SpecEntry]:
    """The spec files directly in ``folder``, by file name; a missing folder has none."""
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() in SPEC_SUFFIXES and p.is_file())
    except OSError:
        return []
    return [read_entry(p) for p in files if not p.name.startswith(".")]


def templates() -> list[SpecEntry]:
    """The demo schedules offered by New from template."""
    return list_specs(DEMO_DIR)


def seed_workspace(folder: Path) -> list[Path]:
    """Copy the demo schedules into ``folder`` when it holds no spec yet; returns what was copied."""
    folder.mkdir(parents=True, exist_ok=True)
    if list_specs(folder):
        return []
    copied = []
    for entry in templates():
        target = folder / entry.path.name
        shutil.copyfile(entry.path, target)
        copied.append(target)
    return copied


#: The longest schedule id (docs/contract.md §1).
MAX_ID = 64
#: Letters that Unicode does not decompose into a base letter and a mark.
_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "þ": "th", "ı": "i"})
_NOT_ID = re.compile(r"[^a-z0-9]+")
#: The id of a schedule whose title gives no letter or digit at all.
FALLBACK_ID = "schedule"


def slug(text: str) -> str:
    """The schedule id a title gives: ``"Morning summary"`` → ``morning-summary``.

    Lower-case and folded to ASCII (``"Zürich Straße"`` → ``zurich-strasse``);
    every run of other characters becomes one ``-``; trimmed to 64 characters;
    never empty (:data:`FALLBACK_ID`). Always a valid id.
    """
    folded = unicodedata.normalize("NFKD", text.lower().translate(_FOLD))
    ascii_text = folded.encode("ascii", "ignore").decode("ascii")
    out = _NOT_ID.sub("-", ascii_text).strip("-")[:MAX_ID].rstrip("-")
    return out or FALLBACK_ID


def unique_id(base: str, taken: Collection[str]) -> str:
    """``base`` (made an id with :func:`slug` when it is not one) if nothing in ``taken`` has it,
    else the first free ``base-2``, ``base-3`` … (shortened so that it stays within 64 characters)."""
    root = base if SCHEDULE_ID.fullmatch(base) else slug(base)
    if root not in taken:
        return root
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = root[: MAX_ID - len(suffix)].rstrip("._-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


def ids_in_use(folder: Path, *, besides: Path | None = None) -> dict[str, Path]:
    """The schedule ids written inside the workspace's spec files (not their file names),
    each with the file holding it; ``besides`` (the file being edited or saved over) is left out."""
    skip = besides.resolve() if besides is not None else None
    found: dict[str, Path] = {}
    for entry in list_specs(folder):
        if entry.schedule_id and entry.path.resolve() != skip:
            found.setdefault(entry.schedule_id, entry.path)
    return found


def names_in_use(folder: Path, *, besides: Path | None = None) -> set[str]:
    """What a new id must avoid in the workspace: the ids inside its files, and the files'
    own names (so that ``<id>.yaml``, the name offered when saving, is free too)."""
    skip = besides.resolve() if besides is not None else None
    stems = {e.path.stem for e in list_specs(folder) if e.path.resolve() != skip}
    return set(ids_in_use(folder, besides=besides)) | stems


def blank_spec(clock: Clock, folder: Path, zone: str, taken: Collection[str] = ()) -> dict[str, Any]:
    """A new calendar schedule: every day at 09:00 in ``zone`` (the workspace's), from today.

    Its title is "New schedule" and its id the title's, made unique against the
    workspace and ``taken`` (the ids published to the ledger). The clock-change
    policies are pre-selected (the contract has no silent default): a missing
    09:00 moves to the next valid time, a repeated one runs once.
    """
    today = clock.now().astimezone(get_zone(zone)).date()
    start = datetime(today.year, today.month, today.day, 9, 0)
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": unique_id(slug(NEW_TITLE), names_in_use(folder) | set(taken)),
        "revision": 1,
        "title": NEW_TITLE,
        "timeZone": zone,
        "kind": "calendar",
        "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "start": start.strftime("%Y-%m-%dT%H:%M:%S"),
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "FIRST_ONLY",
    }


def from_template(template: Path, folder: Path, taken: Collection[str] = ()) -> dict[str, Any]:
    """A template's mapping as revision 1 of a new schedule, with an id used neither in
    ``folder`` nor in ``taken`` (the ids published to the ledger)."""
    data = load_text(read_spec_text(template), template.name)
    if not isinstance(data, dict):
        raise UserError(f"{template.name}: not a mapping of keys to values")
    base = str(data.get("scheduleId") or template.stem)
    data["scheduleId"] = unique_id(base, names_in_use(folder) | set(taken))
    data["revision"] = 1
    return data
