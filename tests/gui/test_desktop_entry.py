"""`scheduler-gui --install-desktop-entry` / `--uninstall-desktop-entry`: the XDG files, valid, and gone again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QImage
from PySide6.QtWidgets import QMenu
from shell_fixtures import window_fixture  # noqa: F401

from core.desktop.entry import APP_ID, PNG_SIZES, WM_CLASS, EntryFiles, desktop_text, exec_argument
from scheduler_gui.app import main
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "share"
    root.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(root))
    return root


def _desktop_keys(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if line)


def test_install_writes_launcher_icons_and_metainfo(data_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--install-desktop-entry"]) == 0
    files = EntryFiles(data_home)
    assert _tree(data_home) >= {str(p.relative_to(data_home)) for p in files.all()}
    keys = _desktop_keys(files.desktop)
    program = Path(keys["TryExec"])
    assert program.is_absolute() and program.name == "scheduler-gui"
    assert keys["Exec"] == keys["TryExec"]
    assert keys["Icon"] == APP_ID and keys["StartupWMClass"] == WM_CLASS
    assert keys["Categories"] == "Office;ProjectManagement;" and "schedule;" in keys["Keywords"]
    assert files.svg.read_bytes().startswith(b"<svg")
    for size in PNG_SIZES:
        image = QImage(str(files.png(size)))
        assert (image.width(), image.height()) == (size, size)
        assert image.pixelColor(size // 2, size // 8).alpha() == 255  # drawn, not blank
    assert f"<id>{APP_ID}</id>" in files.metainfo.read_text(encoding="utf-8")
    assert "Added Tidemark to the applications menu" in capsys.readouterr().out


def test_uninstall_leaves_the_folders_as_before(data_home: Path) -> None:
    # Someone else's icon and launcher live in the same folders.
    other = data_home / "icons" / "hicolor" / "48x48" / "apps" / "other.png"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"png")
    (data_home / "applications").mkdir()
    (data_home / "applications" / "other.desktop").write_text("[Desktop Entry]\n")
    before = _tree(data_home)
    assert main(["--install-desktop-entry"]) == 0
    assert _tree(data_home) != before
    assert main(["--uninstall-desktop-entry"]) == 0
    assert _tree(data_home) == before
    assert other.read_bytes() == b"png"


def test_uninstall_when_nothing_is_installed(data_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--uninstall-desktop-entry"]) == 0
    assert "0 files" in capsys.readouterr().out
    assert _tree(data_home) == set()


def test_a_data_folder_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file where the folder should be: refused even for root, unlike a read-only mode.
    blocked = tmp_path / "share"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))
    assert main(["--install-desktop-entry"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"scheduler-gui: cannot write under {blocked}:")
    assert "Traceback" not in err
    assert blocked.read_text() == "not a folder"


def test_both_flags_at_once_are_refused(data_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--install-desktop-entry", "--uninstall-desktop-entry"]) == 2
    assert "not allowed with" in capsys.readouterr().err
    assert _tree(data_home) == set()


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [
        ("/usr/bin/scheduler-gui", "/usr/bin/scheduler-gui"),
        ("/home/a b/bin/scheduler-gui", '"/home/a b/bin/scheduler-gui"'),
        ('/opt/say "hi"/x', '"/opt/say \\\\"hi\\\\"/x"'),
        ("/opt/100%/x", "/opt/100%%/x"),
    ],
    ids=["plain", "space", "quote", "percent"],
)
def test_exec_arguments_are_quoted_as_the_specification_asks(arg: str, quoted: str) -> None:
    assert exec_argument(arg) == quoted


def _validator(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(
            f"{name} is not installed (Debian package {'appstream' if 'appstream' in name else 'desktop-file-utils'})"
        )
    return found


def test_metainfo_passes_appstreamcli_validate(data_home: Path) -> None:
    tool = _validator("appstreamcli")
    assert main(["--install-desktop-entry"]) == 0
    done = subprocess.run(
        [tool, "validate", "--no-net", str(EntryFiles(data_home).metainfo)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("program", ["/usr/bin/scheduler-gui", "/home/a b/bin/scheduler-gui"], ids=["plain", "space"])
def test_desktop_file_passes_desktop_file_validate(tmp_path: Path, program: str) -> None:
    tool = _validator("desktop-file-validate")
    path = tmp_path / f"{APP_ID}.desktop"
    path.write_text(desktop_text(Path(program)), encoding="utf-8")
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    said = (done.stdout + done.stderr).lower()
    assert done.returncode == 0 and "error" not in said and "warning" not in said, said


def test_help_menu_adds_to_the_applications_menu(window: MainWindow, data_home: Path) -> None:
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    item = next(a for a in help_menu.actions() if a.text() == "Add to Applications &Menu")
    item.trigger()
    assert EntryFiles(data_home).desktop.is_file()
    assert window.statusBar().currentMessage().startswith("Added Tidemark to the applications menu")


def _engine_menu(window: MainWindow) -> QMenu:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "E&ngine")
    assert isinstance(menu, QMenu)
    return menu


def _engine_item(window: MainWindow, text: str) -> QAction:
    return next(a for a in _engine_menu(window).actions() if a.text() == text)


def _click_engine_item(qtbot, window: MainWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    """Open the Engine menu and click the item, as a person does."""
    menu = _engine_menu(window)
    menu.popup(window.mapToGlobal(window.rect().topLeft()))
    qtbot.waitExposed(menu)
    item = _engine_item(window, text)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(item).center())
    qtbot.waitUntil(lambda: not menu.isVisible())


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root))
    return root


def test_start_with_my_session_writes_and_removes_the_autostart_entry(
    config_home: Path, qtbot, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    entry = config_home / "autostart" / f"{APP_ID}.desktop"
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    item = _engine_item(window, "Start with My Sess&ion")
    assert item.isCheckable() and not item.isChecked()  # off by default
    assert not entry.exists()
    _click_engine_item(qtbot, window, "Start with My Sess&ion")
    assert item.isChecked()
    keys = _desktop_keys(entry)
    program, flag = keys["Exec"].split(" ")
    assert Path(program).name == "scheduler-gui" and flag == "--minimized"
    assert keys["Icon"] == APP_ID and keys["X-GNOME-Autostart-enabled"] == "true"
    assert "when you log in" in window.statusBar().currentMessage()
    # A new window reads the state from the desktop, not from a setting.
    again = MainWindow(ctx)
    qtbot.addWidget(again)
    assert _engine_item(again, "Start with My Sess&ion").isChecked()
    _click_engine_item(qtbot, window, "Start with My Sess&ion")
    assert not item.isChecked() and not entry.exists()
    assert entry.parent.is_dir() and list(entry.parent.iterdir()) == []


def test_start_with_my_session_that_cannot_be_written_stays_off(
    tmp_path: Path, qtbot, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    blocked = tmp_path / "config"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocked))
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    item = _engine_item(window, "Start with My Sess&ion")
    item.trigger()
    assert not item.isChecked()
    assert window.statusBar().currentMessage().startswith("Could not change how Tidemark starts: cannot write")


def test_minimized_flag_is_parsed_and_refused_with_screenshot(tmp_path: Path) -> None:
    from scheduler_gui.app import UsageError, parse_args

    assert parse_args(["--minimized"]).minimized
    assert not parse_args([]).minimized
    with pytest.raises(UsageError, match="--minimized does not go with --screenshot"):
        parse_args(["--minimized", "--screenshot", str(tmp_path / "x.png")])


def test_startup_wm_class_is_the_class_qt_gives_the_window() -> None:
    """Qt's xcb plugin writes WM_CLASS as (the program's name, QCoreApplication.applicationName()):
    the launcher's StartupWMClass must be the second, or the dock shows the window as another program."""
    from PySide6.QtCore import QCoreApplication

    from scheduler_gui.app import build_application

    build_application()
    keys = dict(line.split("=", 1) for line in desktop_text(Path("/usr/bin/scheduler-gui")).splitlines()[1:])
    assert keys["StartupWMClass"] == QCoreApplication.applicationName() == WM_CLASS
