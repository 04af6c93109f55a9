"""The workspace's settings file: its default zone, confirmed or not, read tolerantly
(a broken file is one message and a fallback, never a traceback) and written in one step
(a broken file is kept aside, and keys this version does not know are kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.spec.workspace_settings import (
    SETTINGS_NAME,
    WorkspaceSettingsError,
    choose_zone,
    read_settings,
    settings_path,
    zone_mismatch,
)

MACHINE = "Europe/Berlin"


def test_no_file_yet_is_the_machines_zone_unconfirmed(tmp_path: Path) -> None:
    read = read_settings(tmp_path, MACHINE)
    assert (read.zone, read.confirmed, read.found, read.problem) == (MACHINE, False, False, None)
    assert not settings_path(tmp_path).exists()  # reading writes nothing


def test_choosing_writes_the_file_and_reads_back_confirmed(tmp_path: Path) -> None:
    choose_zone(tmp_path, "Asia/Tokyo", MACHINE)
    path = tmp_path / SETTINGS_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"schema": "workspaceSettings.v1", "defaultZone": "Asia/Tokyo", "defaultZoneConfirmed": True}
    read = read_settings(tmp_path, MACHINE)
    assert (read.zone, read.confirmed, read.found, read.problem) == ("Asia/Tokyo", True, True, None)
    assert [p.name for p in tmp_path.iterdir()] == [SETTINGS_NAME]  # no temporary file left behind


def test_an_unconfirmed_zone_in_the_file_stays_unconfirmed(tmp_path: Path) -> None:
    settings_path(tmp_path).write_text('{"defaultZone": "Asia/Tokyo", "defaultZoneConfirmed": false}')
    read = read_settings(tmp_path, MACHINE)
    assert (read.zone, read.confirmed, read.problem) == ("Asia/Tokyo", False, None)


def test_a_choice_keeps_keys_it_does_not_know(tmp_path: Path) -> None:
    settings_path(tmp_path).write_text('{"defaultZone": "UTC", "defaultZoneConfirmed": true, "colour": "teal"}')
    choose_zone(tmp_path, "America/Bogota", MACHINE)
    data = json.loads(settings_path(tmp_path).read_text(encoding="utf-8"))
    assert data["colour"] == "teal" and data["defaultZone"] == "America/Bogota"


def test_an_invalid_zone_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceSettingsError, match=r"Europe/Berlinn.*did you mean Europe/Berlin"):
        choose_zone(tmp_path, "Europe/Berlinn", MACHINE)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        pytest.param('{"defaultZone": "Europe/Paris",', "not JSON (line 1, column", id="truncated_json"),
        pytest.param("\xff\xfe garbage", "not JSON", id="not_text"),
        pytest.param('["Europe/Paris"]', "not a JSON object", id="a_list"),
        pytest.param('{"defaultZoneConfirmed": true}', "defaultZone: missing", id="no_zone"),
        pytest.param('{"defaultZone": "EST"}', "defaultZone: 'EST' is an abbreviation", id="abbreviation"),
        pytest.param('{"defaultZone": "Europe/Pari"}', "did you mean Europe/Paris", id="typo"),
        pytest.param('{"defaultZone": 5}', "defaultZone: expected an IANA time zone name", id="a_number"),
        pytest.param(
            '{"defaultZone": "UTC", "defaultZoneConfirmed": "yes"}',
            "defaultZoneConfirmed: expected true or false",
            id="confirmed_not_a_boolean",
        ),
    ],
)
def test_a_broken_file_is_one_message_and_the_machines_zone(tmp_path: Path, text: str, said: str) -> None:
    path = settings_path(tmp_path)
    path.write_bytes(text.encode("latin-1"))
    read = read_settings(tmp_path, MACHINE)
    assert (read.zone, read.confirmed, read.found) == (MACHINE, False, True)
    assert read.problem is not None and said in read.problem
    assert "\n" not in read.problem and read.problem.startswith(f"{SETTINGS_NAME}: ")
    assert path.read_bytes() == text.encode("latin-1")  # reading never touches it


def test_a_choice_over_a_broken_file_keeps_the_broken_file_aside(tmp_path: Path) -> None:
    path = settings_path(tmp_path)
    path.write_text('{"defaultZone": "Europe/Paris",', encoding="utf-8")
    read = read_settings(tmp_path, MACHINE)
    assert read.problem is not None and f"{SETTINGS_NAME}.unreadable" in read.problem
    choose_zone(tmp_path, "Europe/Paris", MACHINE)
    kept = tmp_path / f"{SETTINGS_NAME}.unreadable"
    assert kept.read_text(encoding="utf-8") == '{"defaultZone": "Europe/Paris",'
    assert read_settings(tmp_path, MACHINE).zone == "Europe/Paris"
    # A second broken file does not overwrite the first one kept.
    path.write_text("nonsense", encoding="utf-8")
    choose_zone(tmp_path, "UTC", MACHINE)
    assert kept.read_text(encoding="utf-8") == '{"defaultZone": "Europe/Paris",'
    assert (tmp_path / f"{SETTINGS_NAME}.unreadable-2").read_text(encoding="utf-8") == "nonsense"


def test_a_folder_in_the_files_place_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    settings_path(tmp_path).mkdir()
    read = read_settings(tmp_path, MACHINE)
    assert read.zone == MACHINE and read.problem is not None and "cannot be read" in read.problem
    with pytest.raises(WorkspaceSettingsError, match="cannot be written"):
        choose_zone(tmp_path, "UTC", MACHINE)


def test_a_missing_workspace_folder_is_made(tmp_path: Path) -> None:
    choose_zone(tmp_path / "new", "UTC", MACHINE)
    assert read_settings(tmp_path / "new", MACHINE).zone == "UTC"


@pytest.mark.parametrize(
    ("machine", "workspace", "said"),
    [
        pytest.param("Europe/Berlin", "Europe/Berlin", None, id="same"),
        pytest.param(
            "America/New_York",
            "Europe/Berlin",
            "This machine is in America/New_York; the workspace's zone is Europe/Berlin",
            id="travelling",
        ),
    ],
)
def test_zone_mismatch(machine: str, workspace: str, said: str | None) -> None:
    assert zone_mismatch(machine, workspace) == said
