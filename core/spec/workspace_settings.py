"""The workspace's own settings: a small JSON file in the workspace folder.

It holds the zone new schedules start in (``defaultZone``, an IANA name) and
whether a person confirmed it (``defaultZoneConfirmed``). Until there is a
file, the default is the machine's zone, unconfirmed: the machine's zone is a
guess (a person may be travelling), never a silent choice.

Reading is tolerant: a file that cannot be used (broken JSON, a zone that is
not one, a folder in its place) gives one line saying why, and the machine's
zone, unconfirmed. Reading never writes. Writing replaces the file in one step;
a file that could not be read is first kept aside (``….unreadable``), and keys
this version does not know are kept, so that nothing a person wrote is lost.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError, ZoneError, first_line
from core.time.zones import check_zone_name

#: The file's name in the workspace folder (a dot file: the folder lists schedules, not settings).
SETTINGS_NAME = ".tidemark-workspace.json"
SCHEMA = "workspaceSettings.v1"
ZONE_KEY = "defaultZone"
CONFIRMED_KEY = "defaultZoneConfirmed"
#: The name a file that could not be read is kept under when a new one is written.
UNREADABLE_SUFFIX = ".unreadable"


class WorkspaceSettingsError(UserError):
    """The settings cannot be written, or a zone given to them is not a zone."""


@dataclass(frozen=True)
class SettingsRead:
    """What the workspace's settings say, or the fallback when they cannot be used."""

    #: The zone new schedules start in.
    zone: str
    #: True when a person confirmed :attr:`zone`.
    confirmed: bool
    #: True when there is a settings file (readable or not).
    found: bool
    #: Why the file could not be used (one line, naming the file), or None.
    problem: str | None = None
    #: The file's keys besides ours, written back as they were.
    extra: Mapping[str, Any] = field(default_factory=dict)


def settings_path(folder: Path) -> Path:
    """Where the settings of the workspace ``folder`` are."""
    return folder / SETTINGS_NAME


def read_settings(folder: Path, machine_zone: str) -> SettingsRead:
    """The workspace's settings; ``machine_zone`` (unconfirmed) when there are none or they cannot be used."""
    path = settings_path(folder)
    if not path.exists() and not path.is_symlink():
        return SettingsRead(machine_zone, False, False)
    try:
        data = _parse(path)
        zone, confirmed = _zone(data), _confirmed(data)
    except _Unusable as exc:
        kept = _free_aside(path).name
        problem = f"{SETTINGS_NAME}: {exc}; new schedules use this machine's zone until one is chosen"
        return SettingsRead(machine_zone, False, True, f"{problem} (the file will be kept as {kept})")
    extra = {k: v for k, v in data.items() if k not in (ZONE_KEY, CONFIRMED_KEY, "schema")}
    return SettingsRead(zone, confirmed, True, None, extra)


def choose_zone(folder: Path, zone: str, machine_zone: str) -> SettingsRead:
    """Record ``zone``, confirmed by a person, as the workspace's default; returns the settings now.

    Raises :class:`WorkspaceSettingsError` for a zone that is not one (nothing is written) or a file
    that cannot be written.
    """
    try:
        check_zone_name(zone)
    except ZoneError as exc:
        raise WorkspaceSettingsError(f"{ZONE_KEY}: {exc}") from None
    before = read_settings(folder, machine_zone)
    data = {"schema": SCHEMA, ZONE_KEY: zone, CONFIRMED_KEY: True, **before.extra}
    path = settings_path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if before.problem is not None and path.is_file():
            os.replace(path, _free_aside(path))
        _write_json(path, data)
    except OSError as exc:
        raise WorkspaceSettingsError(f"{path}: cannot be written ({exc.strerror or first_line(exc)})") from None
    return SettingsRead(zone, True, True, None, before.extra)


def zone_mismatch(machine_zone: str, workspace_zone: str) -> str | None:
    """What the status bar says when this machine's zone is not the workspace's, else None."""
    if machine_zone == workspace_zone:
        return None
    return f"This machine is in {machine_zone}; the workspace's zone is {workspace_zone}"


class _Unusable(Exception):
    """Why a settings file cannot be used (its message is shown after the file's name)."""


def _parse(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _Unusable("not JSON (it is not UTF-8 text)") from None
    except OSError as exc:
        raise _Unusable(f"cannot be read ({exc.strerror or first_line(exc)})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise _Unusable(f"not JSON{where}") from None
    if not isinstance(data, dict):
        raise _Unusable("not a JSON object of settings")
    return data


def _zone(data: Mapping[str, Any]) -> str:
    if ZONE_KEY not in data:
        raise _Unusable(f"{ZONE_KEY}: missing")
    try:
        return check_zone_name(data[ZONE_KEY])
    except ZoneError as exc:
        raise _Unusable(f"{ZONE_KEY}: {exc}") from None


def _confirmed(data: Mapping[str, Any]) -> bool:
    value = data.get(CONFIRMED_KEY, False)
    if not isinstance(value, bool):
        raise _Unusable(f"{CONFIRMED_KEY}: expected true or false")
    return value


def _free_aside(path: Path) -> Path:
    """The first name not yet taken to keep an unreadable ``path`` under: ``….unreadable``, ``….unreadable-2`` …"""
    candidate = path.with_name(path.name + UNREADABLE_SUFFIX)
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}{UNREADABLE_SUFFIX}-{n}")
        n += 1
    return candidate


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` whole, replacing ``path`` in one step (a crash leaves the old file or the new one)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".saving")
    try:
        os.chmod(temp, 0o644)  # a settings file, not a secret: others sharing the folder may read it
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dict(data), out, indent=2, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
