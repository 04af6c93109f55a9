"""``schedctl demos``: how a person who installed Tidemark finds the demo schedules it ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import cli
from core.desktop.bundled import demo_dir, demo_files

ROOT = Path(__file__).resolve().parents[2]


def test_demos_lists_every_shipped_schedule_with_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demos"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    listed = dict(line.split(maxsplit=1) for line in out.splitlines())
    shipped = sorted(p.stem for p in (ROOT / "resources" / "demo").glob("*.yaml"))
    assert sorted(listed) == shipped == list(demo_files())
    assert {Path(path) for path in listed.values()} == set(demo_dir().glob("*.yaml"))


def test_a_demo_by_name_is_its_file_for_the_other_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demos", "nightly-backup"]) == 0
    path = capsys.readouterr().out.strip()
    assert Path(path) == demo_dir() / "nightly-backup.yaml"
    assert cli.main(["preview", path, "--from", "2026-03-01", "--count", "2"]) == 0
    out, _ = capsys.readouterr()
    assert "nightly-backup" in out.splitlines()[0]


def test_an_unknown_demo_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demos", "nightly-backups"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "schedctl demos: no demo schedule named 'nightly-backups' (the demos: " + ", ".join(demo_files()) + ")"
    ]
