"""`scheduler-gui --install-desktop-entry` / `--uninstall-desktop-entry`: the XDG files, valid, and gone again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from shell_fixtures import window_fixture  # noqa: F401

from core.desktop_entry import APP_ID, PNG_SIZES, EntryFiles, desktop_text, exec_argument
from scheduler_gui.app import main
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
    assert keys["Icon"] == APP_ID and keys["StartupWMClass"] == APP_ID
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
