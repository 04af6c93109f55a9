"""Where the desktop entry's files go (XDG Base Directory), without Qt."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.desktop.entry import APP_ID, autostart_file, config_home, data_home


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HOME": "/home/ada"}, "/home/ada/.local/share"),
        ({"HOME": "/home/ada", "XDG_DATA_HOME": "/data"}, "/data"),
        ({"HOME": "/home/ada", "XDG_DATA_HOME": ""}, "/home/ada/.local/share"),
        ({"HOME": "/home/ada", "XDG_DATA_HOME": "relative/share"}, "/home/ada/.local/share"),
    ],
    ids=["default", "set", "empty", "relative_ignored"],
)
def test_data_home_follows_the_base_directory_specification(env: dict[str, str], expected: str) -> None:
    assert data_home(env) == Path(expected)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HOME": "/home/ada"}, "/home/ada/.config"),
        ({"HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg"}, "/cfg"),
        ({"HOME": "/home/ada", "XDG_CONFIG_HOME": "cfg"}, "/home/ada/.config"),
    ],
    ids=["default", "set", "relative_ignored"],
)
def test_config_home_follows_the_base_directory_specification(env: dict[str, str], expected: str) -> None:
    assert config_home(env) == Path(expected)


def test_the_autostart_entry_is_named_by_the_app_id() -> None:
    assert autostart_file(Path("/cfg")) == Path("/cfg/autostart") / f"{APP_ID}.desktop"
