"""File ▸ Import…, as a person uses it: Ctrl+I, the crontab chosen, the zone typed, a job
unchecked, Save to workspace; the files land in the workspace unpublished and untrusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QFileDialog, QLabel, QPushButton, QScrollArea, QWidget
from shell_fixtures import when_modal, window_fixture  # noqa: F401
from test_window_keys import _shown as shown

from core.ledger.monitor_reads import schedule_summaries
from core.spec.files import load_spec
from scheduler_gui.designer.trust import TrustStore
from scheduler_gui.main_window import MainWindow
from scheduler_gui.workspace.import_dialog import ImportDialog

CRONTAB = """\
# the old box's jobs
30 2 * * * /usr/local/bin/backup --full
0 9 1,15 * mon /usr/bin/report
@reboot /usr/bin/warm-cache
"""
NEW_YORK = "America/New_York"
CTRL = Qt.KeyboardModifier.ControlModifier
#: Where the dialog is rendered, to be looked at.
SHOTS = Path("/tmp/tidemark-import-shots")


def named(root: QWidget, kind: type, name: str) -> Any:
    found = [w for w in root.findChildren(kind) if w.accessibleName() == name]
    assert len(found) == 1, (name, [w.accessibleName() for w in root.findChildren(kind)])
    return found[0]


def shot(widget: QWidget, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    assert widget.grab().save(str(SHOTS / f"{name}.png"))


def choose_file(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """The file dialog answers ``path``, as if the person picked it."""
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(path)], ""))


def click(widget: QWidget, scroller: QScrollArea | None = None) -> None:
    """Scroll to ``widget`` and click it where its words are (a checkbox takes clicks on its box and words only)."""
    if scroller is not None:
        scroller.ensureWidgetVisible(widget)
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(min(10, widget.width() // 2), widget.height() // 2))


@pytest.fixture
def crontab(tmp_path: Path) -> Path:
    path = tmp_path / "old-box.crontab"
    path.write_text(CRONTAB, encoding="utf-8")
    return path


def test_import_a_crontab_into_the_workspace(
    window: MainWindow, qtbot: Any, crontab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    shown(window, qtbot)
    before = {p.name for p in window.ctx.workspace.iterdir()}
    choose_file(monkeypatch, crontab)
    seen: dict[str, Any] = {}

    def act(dialog: ImportDialog) -> bool:
        if not dialog.ready:
            return False
        if "typed" not in seen:
            seen["typed"] = True
            assert dialog.zone_box.isVisible()
            seen["note"] = dialog.zone_note.text()
            field = named(dialog, QWidget, "Zone for jobs with no CRON_TZ")
            field.setFocus()
            field.selectAll()
            QTest.keyClicks(field, NEW_YORK)
            QTest.keyClick(field, Qt.Key.Key_Return)
            return False
        if dialog.zone != NEW_YORK:
            return False
        seen["heading"] = dialog.heading.text()
        seen["rows"] = named(dialog, QLabel, "Next runs of backup-full.yaml").text()
        seen["change"] = named(dialog, QLabel, "At the next clock change: /usr/local/bin/backup --full").text()
        seen["problem"] = named(dialog, QLabel, "Not imported: line 4").text()
        seen["checks"] = [c.accessibleName() for c in dialog.findChildren(QCheckBox)]
        shot(dialog, "import-dialog")
        click(named(dialog, QCheckBox, "Import line 3: /usr/bin/report"), dialog.job_list)
        seen["chosen"] = dialog.chosen_label.text()
        click(named(dialog, QPushButton, "Save to workspace"))
        return True

    when_modal(ImportDialog, act)
    QTest.keyClick(window, Qt.Key.Key_I, CTRL)  # File ▸ Import…

    assert "UTC: the workspace's zone" in seen["note"]
    assert seen["heading"].startswith("From old-box.crontab: 2 jobs as 3 schedules; 1 line not imported")
    assert seen["rows"].splitlines()[0] == "Tue 2027-03-02 02:30 EST   2027-03-02 07:30Z"
    assert seen["change"].splitlines() == [
        "Next clock change, Sun 2027-03-14: clocks jump from 02:00 EST to 03:00 EDT (1 h); "
        "runs from 01:00 EST to 04:00 EDT",
        "cron: runs at 03:00 EDT right after the change · Tidemark: runs at 03:00 EDT right after the change"
        " · the same",
    ]
    assert "@reboot /usr/bin/warm-cache" in seen["problem"] and "runs at boot" in seen["problem"]
    assert seen["checks"] == ["Import line 2: /usr/local/bin/backup --full", "Import line 3: /usr/bin/report"]
    assert seen["chosen"] == "1 schedule chosen"

    # Only the job left checked is written; it shows in the sidebar and opens untrusted.
    added = {p.name for p in window.ctx.workspace.iterdir()} - before
    assert added == {"backup-full.yaml"}
    path = window.ctx.workspace / "backup-full.yaml"
    spec = load_spec(path)
    assert (spec.time_zone, spec.rule) == (NEW_YORK, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
    assert path in [row.path for row in window.sidebar.schedules.rows()]
    assert window.document is not None and window.document.path == path.resolve()
    assert not TrustStore(window.ctx.settings).is_trusted_file(path)
    assert window.designer is not None
    window.designer.task_section.set_open(True)
    prompt = window.designer.task_editor.trust_prompt  # type: ignore[attr-defined]
    assert prompt.isVisibleTo(window.designer)
    assert "Not published" in window.statusBar().currentMessage()
    # Nothing reached the ledger.
    assert "backup-full" not in {s.schedule_id for s in schedule_summaries(window.ctx.ledger)}


def test_the_menu_item_and_its_key(window: MainWindow) -> None:
    act = window.acts.import_schedules
    file_menu = window.menuBar().actions()[0].menu()
    assert act in file_menu.actions()  # type: ignore[union-attr]
    assert act.shortcut().toString() == "Ctrl+I"


def test_a_binary_file_is_one_message_and_nothing_is_written(
    window: MainWindow, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "a.out"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00")
    before = sorted(p.name for p in window.ctx.workspace.iterdir())
    seen: dict[str, Any] = {}

    def act(dialog: ImportDialog) -> bool:
        if not dialog.ready:
            return False
        seen["problem"] = dialog.problem.text() if dialog.problem.isVisibleTo(dialog) else ""
        seen["save"] = named(dialog, QPushButton, "Save to workspace").isEnabled()
        seen["cards"] = len(dialog.cards)
        shot(dialog, "import-dialog-binary")
        seen["heading"] = dialog.heading.text()
        dialog.reject()
        return True

    choose_file(monkeypatch, binary)
    when_modal(ImportDialog, act)
    window.acts.import_schedules.trigger()
    assert seen == {
        "problem": "a.out: line 1: a NUL byte; this is binary data, not a crontab",
        "save": False,
        "cards": 0,
        "heading": "Cannot import a.out.",
    }
    assert sorted(p.name for p in window.ctx.workspace.iterdir()) == before


def test_a_timer_and_its_service_are_imported_like_a_crontab(window: MainWindow, tmp_path: Path) -> None:
    timer = tmp_path / "backup.timer"
    timer.write_text(
        "[Unit]\nDescription=Nightly backup\n[Timer]\nOnCalendar=Mon..Fri 09:00 Europe/Paris\nOnBootSec=5min\n",
        encoding="utf-8",
    )
    (tmp_path / "backup.service").write_text("[Service]\nExecStart=/usr/local/bin/backup --quiet\n", encoding="utf-8")
    before = {p.name for p in window.ctx.workspace.iterdir()}
    seen: dict[str, Any] = {}

    def act(dialog: ImportDialog) -> bool:
        if not dialog.ready:
            return False
        seen["heading"] = dialog.heading.text()
        seen["checks"] = [c.accessibleName() for c in dialog.findChildren(QCheckBox)]
        seen["problem"] = named(dialog, QLabel, "Not imported: backup.timer line 5").text()
        click(named(dialog, QPushButton, "Save to workspace"))
        return True

    when_modal(ImportDialog, act)
    window.import_schedules([timer])
    assert seen["heading"].startswith("From backup.timer: 1 job")
    assert seen["checks"] == ["Import backup.timer: Nightly backup"]
    assert "OnBootSec=5min" in seen["problem"] and "boot" in seen["problem"]
    assert {p.name for p in window.ctx.workspace.iterdir()} - before == {"backup.yaml"}
    spec = load_spec(window.ctx.workspace / "backup.yaml")
    assert spec.time_zone == "Europe/Paris" and spec.task is not None
    assert spec.task.argv == ["/usr/local/bin/backup", "--quiet"]
    assert not TrustStore(window.ctx.settings).is_trusted_file(window.ctx.workspace / "backup.yaml")


def test_a_long_crontab_is_read_off_the_gui_thread_and_added_in_turns(qtbot: Any, ctx: Any, tmp_path: Path) -> None:
    path = tmp_path / "long"
    path.write_text(
        "CRON_TZ=Europe/Berlin\n"
        + "".join(f"{m} {h} * * * /bin/job{h}-{m}\n" for h in range(24) for m in range(0, 60, 5))
    )
    dialog = ImportDialog([path], workspace=ctx.workspace, zone="UTC", clock=ctx.clock)
    qtbot.addWidget(dialog)
    assert not dialog.ready  # the constructor returned before the crontab was read
    assert dialog.wait()
    qtbot.waitUntil(lambda: len(dialog.cards) > 0, timeout=30_000)
    assert not dialog.ready and len(dialog.cards) < 288  # the rest come on later turns of the event loop
    qtbot.waitUntil(lambda: dialog.ready, timeout=60_000)
    assert len(dialog.cards) == 288 and not dialog.zone_box.isVisible()


def test_a_job_unchecked_stays_unchecked_when_the_zone_changes(qtbot: Any, ctx: Any, crontab: Path) -> None:
    dialog = ImportDialog([crontab], workspace=ctx.workspace, zone="UTC", clock=ctx.clock)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.ready, timeout=30_000)
    click(named(dialog, QCheckBox, "Import line 2: /usr/local/bin/backup --full"), dialog.job_list)
    dialog.zone_field.choose("Europe/Berlin")
    qtbot.waitUntil(lambda: dialog.ready and dialog.review is not None and dialog.review.zone == "Europe/Berlin")
    assert [c.check.isChecked() for c in dialog.cards] == [False, True]
    assert [s.file_name for s in dialog.chosen()] == ["report-monthdays.yaml", "report-weekdays.yaml"]
    shot(dialog, "import-dialog-berlin")


def test_the_window_reads_imports_only_through_the_review() -> None:
    """No import logic in the window: it asks ``core.importing.sources`` and shows ``core.importing.review``."""
    import ast

    root = Path(__file__).resolve().parents[2] / "scheduler_gui"
    used = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core.importing"):
                used.add((path.name, node.module))
    assert {module for _, module in used} <= {"core.importing.sources", "core.importing.review"}, used
    assert used, "the import dialog asks the core"
