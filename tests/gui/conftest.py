"""Fixtures for the window's tests: a fixed clock, a temporary workspace and
settings in a temporary file, so nothing touches the person's own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gui_support import DEMO, NOW
from PySide6.QtCore import QSettings

from core.clock import FixedClock
from scheduler_gui.context import AppContext
from scheduler_gui.main_thread_gc import collect_on_this_thread
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.zone import ZoneQuestion


@pytest.fixture(autouse=True, scope="session")
def _collect_garbage_on_the_gui_thread(qapp) -> None:
    """As in the app: cycles are collected on the GUI thread only, never by a worker that allocates."""
    collect_on_this_thread(qapp)


#: The zone the test machine is in: given to every context, never read from the real system.
MACHINE_ZONE = "UTC"


@pytest.fixture(autouse=True)
def _machine_zone_from_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A context built without ``machine_zone`` reads TZ first: the tests' own, not the host's."""
    monkeypatch.setenv("TZ", MACHINE_ZONE)


@pytest.fixture(autouse=True)
def _no_unexpected_zone_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new schedule's first save asks about its zone in a modal box: one nobody expects fails the
    test instead of leaving it waiting (``shell_fixtures.keep_zones`` answers it)."""

    def unexpected(box: ZoneQuestion) -> bool:
        raise AssertionError(f"unexpected question: {box.text()}")

    monkeypatch.setattr(ZoneQuestion, "kept", unexpected)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def ctx(tmp_path: Path, clock: FixedClock) -> AppContext:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for spec in DEMO.glob("*.yaml"):
        shutil.copy(spec, workspace / spec.name)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    context = AppContext(
        clock=clock,
        workspace=workspace,
        ledger_url=f"sqlite:///{tmp_path / 'ledger.db'}",
        settings=settings,
        machine_zone=lambda: MACHINE_ZONE,
    )
    yield context
    context.close()


@pytest.fixture
def document(qtbot) -> SpecDocument:
    """The New York 02:30 demo schedule, loaded into a document."""
    doc = SpecDocument()
    doc.load(DEMO / "daily-ops-summary.yaml")
    return doc
