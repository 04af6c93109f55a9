"""The ``scheduler-gui`` command: flags, one-line errors, the version, and a
real launch to the first shown window in a separate process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler_gui.app import EXIT_AFTER_SHOW, SCENES, UsageError, main, parse_args


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["--size", "800x600"], "--size goes with --screenshot"),
        (["--screenshot", "out.jpg"], "must end in .png"),
        (["--screenshot", "/no/such/folder/x.png"], "/no/such/folder does not exist"),
        (["--screenshot", "x.png", "--view", "calendar"], "invalid choice: 'calendar'"),
        (["--screenshot", "x.png", "--size", "big"], "--size big: expected WIDTHxHEIGHT"),
        (["--screenshot", "x.png", "--size", "10x10"], "between 320x240"),
        (["--spec", "/no/such/spec.yaml"], "--spec /no/such/spec.yaml: no such file"),
        (["--db", "mysql://host/db"], "unsupported database 'mysql'"),
        (["--db", "mysql://u:Hunter2-zq@host/db"], "--db mysql://u:***@host/db: unsupported database"),
        (["--db", "postgresql://u:Hunter2-zq@[::1:1/db"], "--db postgresql://u:***@[::1:1/db: not a database URL"),
        (["--db", "::not a url::"], None),
    ],
    ids=[
        "unknown_flag",
        "size_without_screenshot",
        "not_png",
        "missing_folder",
        "bad_view",
        "bad_size",
        "tiny_size",
        "missing_spec",
        "unsupported_db",
        "password_masked",
        "bad_port_masked",
        "bare_path_db_is_sqlite",
    ],
)
def test_bad_flags_exit_2_with_one_line(argv: list[str], names: str | None, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCHEDULER_DB_URL", raising=False)
    if names is None:
        # A bare path is a SQLite file: accepted here, checked when the ledger opens.
        assert parse_args(argv).db == "::not a url::"
        return
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("scheduler-gui: ")
    assert names in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "names"),
    [("rule: [unclosed\n", "not valid YAML"), ("- a\n- list\n", "a spec is a mapping"), ("", "the file is empty")],
    ids=["broken_yaml", "not_a_mapping", "empty"],
)
def test_unreadable_spec_is_a_bad_flag(tmp_path: Path, capsys, content: str, names: str) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(content, encoding="utf-8")
    assert main(["--screenshot", str(tmp_path / "x.png"), "--spec", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and names in err and str(spec) in err
    assert not (tmp_path / "x.png").exists()


def test_workspace_that_is_a_file(tmp_path: Path, capsys) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x", encoding="utf-8")
    assert main(["--workspace", str(f)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_db_from_the_environment(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("SCHEDULER_DB_URL", "oracle://x/y")
    assert main([]) == 2
    assert "SCHEDULER_DB_URL oracle://x/y: unsupported database" in capsys.readouterr().err
    monkeypatch.setenv("SCHEDULER_DB_URL", str(tmp_path / "l.db"))
    assert parse_args([]).db == str(tmp_path / "l.db")
    assert parse_args(["--db", "postgresql+psycopg://u@h/db"]).db == "postgresql+psycopg://u@h/db"


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scheduler-gui ") and "tzdata 20" in out


def test_screenshot_flags_parse(tmp_path: Path) -> None:
    opts = parse_args(["--screenshot", str(tmp_path / "a.png"), "--view", "health", "--size", "1024x640"])
    assert opts.view == "health" and opts.size == (1024, 640) and opts.screenshot == tmp_path / "a.png"


@pytest.mark.parametrize("scene", SCENES)
def test_a_scene_is_only_a_picture(scene: str, tmp_path: Path) -> None:
    assert parse_args(["--screenshot", str(tmp_path / "a.png"), "--view", scene]).view == scene
    with pytest.raises(UsageError, match=f"--view {scene} goes with --screenshot"):
        parse_args(["--view", scene])


def test_view_without_screenshot_opens_the_window_on_it() -> None:
    assert parse_args(["--view", "attention"]).view == "attention"  # the notifications' "Open"
    assert parse_args([]).view is None


def test_launch_shows_the_window_in_a_separate_process(tmp_path: Path) -> None:
    env = dict(os.environ)
    env.update(
        {
            "QT_QPA_PLATFORM": "offscreen",
            EXIT_AFTER_SHOW: "1",
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "HOME": str(tmp_path),
        }
    )
    workspace = tmp_path / "workspace"
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_gui.app", "--workspace", str(workspace), "--db", str(tmp_path / "l.db")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("shown ") and done.stdout.strip().endswith(" ms")
    # First start: the demo schedules were copied into the empty workspace.
    assert (workspace / "daily-ops-summary.yaml").is_file()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("env", "platform", "refused"),
    [
        pytest.param({}, "linux", True, id="headless_linux"),
        pytest.param({"DISPLAY": ":0"}, "linux", False, id="x11"),
        pytest.param({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False, id="wayland"),
        pytest.param({"QT_QPA_PLATFORM": "offscreen"}, "linux", False, id="platform_chosen"),
        pytest.param({}, "darwin", False, id="macos_has_its_own"),
    ],
)
def test_missing_display_is_said_in_words(env: dict[str, str], platform: str, refused: bool) -> None:
    from scheduler_gui.app import missing_display

    reason = missing_display(env, platform)
    assert (reason is not None) == refused
    if refused:
        assert reason is not None and "DISPLAY" in reason and "--screenshot" in reason


def test_headless_launch_exits_1_with_one_line(monkeypatch, capsys) -> None:
    from scheduler_gui.app import main

    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    assert main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no display" in err


def test_start_up_leaves_heavy_optional_libraries_for_later() -> None:
    """The window's start-up modules do not load what only an export needs (the
    iCalendar library: a tenth of the start-up)."""
    probe = (
        "import sys\n"
        "import scheduler_gui.app, scheduler_gui.main_window, scheduler_gui.preview.panel\n"
        "print(','.join(sorted(m for m in ('icalendar', 'core.render.ics') if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == ""
