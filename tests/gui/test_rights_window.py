"""The window on a ledger that does not let it change everything: a viewer's window shows
everything and disables every action with the reason; a publisher's may publish but runs no
engine; a write refused anyway (rights taken away since the window opened) is one line; a
read-only SQLite file is a viewer. Roles are made with ``schedctl db grant``, as a team does."""

from __future__ import annotations

import ast
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QToolButton, QWidget
from shell_fixtures import window_fixture  # noqa: F401
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import SQLAlchemyError

from core import cli
from core.engine.admin import run_now
from core.ledger.db import open_ledger
from core.ledger.publish import publish
from core.ledger.rights import Act
from core.spec.files import load_spec
from core.spec.validation import parse_spec
from scheduler_gui.actions import Actions
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.states import ShutdownMode
from scheduler_gui.rights_gate import ACTION_ACTS

SID = "daily-ops-summary"
ROOT = Path(__file__).resolve().parents[2]


# --- a team's PostgreSQL ledger ----------------------------------------------------------


def _server() -> str:
    url = os.environ.get("TIDEMARK_TEST_PG_URL") or "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
    return make_url(url).set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def _owner(url: str, *statements: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def team_database() -> Iterator[str]:
    """A database of this module on the test server (skipped without one, unless TIDEMARK_REQUIRE_PG)."""
    server = _server()
    name = f"tidemark_gui_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        _owner(server, f'CREATE DATABASE "{name}"')
    except SQLAlchemyError as exc:
        why = f"no PostgreSQL server ({str(getattr(exc, 'orig', exc)).strip().splitlines()[0]})"
        if os.environ.get("TIDEMARK_REQUIRE_PG"):
            pytest.fail(f"TIDEMARK_REQUIRE_PG is set but {why}")
        pytest.skip(why)
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        _owner(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _as(url: str, role: str) -> str:
    return make_url(url).set(username=role, password=None).render_as_string(hide_password=False)


def _schedctl(*argv: str) -> None:
    assert cli.main(list(argv)) == 0, argv


@pytest.fixture
def team(team_database: str, clock: Any) -> str:
    """The owner's URL of a fresh ledger: the New York demo published, and one run that lost its outcome."""
    _owner(team_database, "DROP SCHEMA public CASCADE", "CREATE SCHEMA public")
    spec = load_spec(str(ROOT / "resources" / "demo" / f"{SID}.yaml"))
    data = spec.model_dump(by_alias=True, mode="json", exclude_none=True) | {"cutoverAt": "2027-02-19T00:00:00Z"}
    with open_ledger(team_database, clock) as ledger:
        with ledger.write() as session:
            publish(session, parse_spec(data), clock)
        lost = run_now(ledger, SID, clock)
    _owner(team_database, f"UPDATE occurrences SET state = 'UNKNOWN_EFFECT' WHERE occurrence_id = '{lost}'")
    return team_database


@pytest.fixture
def role(request: pytest.FixtureRequest, team: str, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """A role of the kind the test names (``viewer``, ``publisher``), granted by schedctl; dropped after."""
    kind = request.param
    name = f"tm_{uuid.uuid4().hex[:6]}_{kind}"
    _schedctl("db", "grant", name, "--as", kind, "--db", team)
    capsys.readouterr()
    try:
        yield name
    finally:
        _owner(team, f'DROP OWNED BY "{name}"', f'DROP ROLE "{name}"')


@pytest.fixture
def ctx(ctx: AppContext, team: str, role: str) -> Iterator[AppContext]:
    """The window's context, logged in as ``role``."""
    ctx.ledger_url = _as(team, role)
    yield ctx
    ctx.close()


def opened(window: MainWindow, qtbot: Any, *, start_engine: bool = False) -> MainWindow:
    """The demo's file open, the ledger open, the window shown and active with the focus on the sidebar."""
    window.open_path(window.ctx.workspace / f"{SID}.yaml", ask=False)
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor(start_engine=start_engine)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.sidebar.schedule_view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.sidebar.schedule_view, timeout=5_000)
    return window


def tool_button(window: MainWindow, name: str) -> QToolButton:
    found = [b for b in window.toolbar.findChildren(QToolButton) if b.accessibleName() == name and b.isVisible()]
    assert found, [b.accessibleName() for b in window.toolbar.findChildren(QToolButton)]
    return found[0]


def attention_buttons(window: MainWindow, qtbot: Any) -> list[QPushButton]:
    window.show_view("attention")
    page: Any = window.page("attention")
    qtbot.waitUntil(lambda: bool(page.cards), timeout=15_000)
    return [b for card in page.cards.values() for b in card.findChildren(QPushButton)]


# --- a viewer ----------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["viewer"], indirect=True)
def test_a_viewer_sees_everything_and_every_action_says_why_it_is_off(
    window: MainWindow, qtbot: Any, role: str, tmp_path: Path
) -> None:
    opened(window, qtbot, start_engine=True)
    reason = (
        f"read-only: the database role {role!r} is a viewer; "
        f"ask the ledger's owner: schedctl db grant {role} --as publisher"
    )
    banner = window.findChild(QLabel, "rightsBanner")
    assert banner is not None and banner.isVisible()
    assert banner.accessibleName() == banner.text() == "R" + reason[1:]
    # Everything is shown: the schedule with its state, and the occurrence waiting for a person.
    assert [s.schedule_id for s in window.hub.summaries] == [SID]
    for name in ("Publish", "Pause Schedule", "Run Now"):
        button = tool_button(window, name)
        assert not button.isEnabled() and button.toolTip().startswith(reason), name
    acts = window.acts
    for name in ("publish", "pause_schedule", "resume_schedule", "disable_schedule", "run_now", "backfill"):
        act = getattr(acts, name)
        assert (act.isEnabled(), act.statusTip()) == (False, reason) and act.toolTip().startswith(reason), name
    # A key pressed for an action that is off says why.
    QTest.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.statusBar().currentMessage() == f"Run Now: {reason}"
    # The engine is not started, even when asked: the Engine menu says why.
    assert window.hub.engine is not None and str(window.hub.engine.state) != "running"
    assert not acts.engine_toggle.isEnabled() and acts.engine_toggle.toolTip().startswith(reason)
    menu = acts.engine_toggle.associatedObjects()
    note = next(a for m in menu if isinstance(m, QWidget) for a in m.actions() if a.objectName() == "engineRefused")
    assert note.isVisible() and note.text() == f"No engine here: {reason}"
    buttons = attention_buttons(window, qtbot)
    assert {b.accessibleName() for b in buttons} >= {"It happened", "Abandon"}
    for button in buttons:
        assert not button.isEnabled() and button.accessibleDescription().endswith(f"Not here: {reason}")
    window.resize(1280, 800)
    window.show_view("attention")
    QApplication.processEvents()
    window.grab().save(str(tmp_path / "viewer.png"))
    if os.environ.get("TIDEMARK_SHOTS"):
        window.grab().save(os.environ["TIDEMARK_SHOTS"] + "/viewer-window.png")


@pytest.mark.parametrize(
    ("role", "note", "row"),
    [
        pytest.param(
            "viewer",
            "“daily-ops-summary” is published from daily-ops-summary.yaml on host alice-laptop. "
            "This window cannot publish: read-only: the database role",
            "needs attention",
            id="viewer",
        ),
        pytest.param(
            "publisher",
            "“daily-ops-summary” is also published, from daily-ops-summary.yaml on host alice-laptop: "
            "publishing this file replaces that schedule (you are asked first).",
            "not published · id in use",
            id="publisher_is_warned_of_the_replacement",
        ),
    ],
    indirect=["role"],
)
def test_a_copy_of_the_published_file_is_not_said_to_clash_in_a_viewers_window(
    window: MainWindow, qtbot: Any, role: str, team: str, note: str, row: str
) -> None:
    """The team published the schedule from alice's laptop; this person opens their own copy of the file."""
    _owner(
        team,
        "UPDATE revisions SET source_path = '/home/alice/ops/daily-ops-summary.yaml', source_host = 'alice-laptop'",
    )
    opened(window, qtbot)
    shown = window.designer.identity.note
    qtbot.waitUntil(lambda: shown.text().startswith(note), timeout=10_000)
    assert shown.isVisible()
    viewer = role.endswith("_viewer")
    if viewer:
        assert "replace" not in shown.text()
    (mine,) = [r for r in window.sidebar.schedules.rows() if r.label == "Operating summary"]
    assert mine.second_line.endswith(row)
    assert ("Publishing this file would replace it" in mine.tooltip) is not viewer


# --- a publisher -------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["publisher"], indirect=True)
def test_a_publisher_publishes_but_runs_no_engine(window: MainWindow, qtbot: Any, role: str) -> None:
    opened(window, qtbot, start_engine=True)
    acts = window.acts
    assert acts.publish.isEnabled() and acts.pause_schedule.isEnabled() and acts.run_now.isEnabled()
    assert str(window.hub.engine.state) != "running"
    why = (
        f"the database role {role!r} is a publisher: it cannot run an engine; "
        f"ask the ledger's owner: schedctl db grant {role} --as engine"
    )
    assert (acts.engine_toggle.isEnabled(), acts.engine_toggle.toolTip()) == (False, why)
    assert not acts.engine_autostart.isEnabled()
    window.hub.toggle_engine()
    assert str(window.hub.engine.state) != "running"
    assert all(b.isEnabled() for b in attention_buttons(window, qtbot))
    banner = window.findChild(QLabel, "rightsBanner")
    assert banner is not None and banner.text() == f"No engine in this window: {why}"


@pytest.mark.parametrize("role", ["engine"], indirect=True)
def test_an_engine_role_runs_the_engine_but_does_not_publish(window: MainWindow, qtbot: Any, role: str) -> None:
    opened(window, qtbot)
    acts = window.acts
    why = (
        f"the database role {role!r} is an engine: it may not publish, pause, resume, disable or fence; "
        f"ask the ledger's owner: schedctl db grant {role} --as publisher"
    )
    for name in ("publish", "pause_schedule", "disable_schedule"):
        act = getattr(acts, name)
        assert not act.isEnabled() and act.toolTip().startswith(why), name
    assert acts.run_now.isEnabled() and acts.backfill.isEnabled() and acts.engine_toggle.isEnabled()
    banner = window.findChild(QLabel, "rightsBanner")
    assert banner is not None and banner.text() == f"This window may not publish: {why}"
    assert all(b.isEnabled() for b in attention_buttons(window, qtbot))


@pytest.mark.parametrize("role", ["publisher"], indirect=True)
def test_a_write_refused_after_the_window_opened_is_one_line(
    window: MainWindow, qtbot: Any, role: str, team: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The role was a publisher when the window opened, and is a viewer now: the database refuses."""
    from scheduler_gui.monitor.schedule_actions import GateDialog

    opened(window, qtbot)
    buttons = attention_buttons(window, qtbot)
    _schedctl("db", "grant", role, "--as", "viewer", "--db", team)
    capsys.readouterr()
    line = (
        f"the database role {role!r} may not change the ledger (permission denied for table schedules); "
        f"nothing was changed; the ledger's owner can give it the rights: schedctl db grant {role} --as publisher"
    )
    dialog = GateDialog(window.ctx, SID, "pause")
    qtbot.addWidget(dialog)
    dialog.accept()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10_000)
    assert dialog.problem.text() == line
    happened = next(b for b in buttons if b.accessibleName() == "It happened")
    happened.click()
    page: Any = window.page("attention")
    card = next(iter(page.cards.values()))
    qtbot.waitUntil(lambda: card.message.text() != "Recording…", timeout=10_000)
    said = card.message.text()
    assert said.startswith(f"the database role {role!r} may not change the ledger (permission denied for table ")
    assert said.endswith(f"schedctl db grant {role} --as publisher") and "cannot be used" not in said
    # F5 asks the ledger again: the window is now a viewer's.
    with qtbot.waitSignal(window.hub.rightsChanged, timeout=10_000):
        QTest.keyClick(window, Qt.Key.Key_F5)
    banner = window.findChild(QLabel, "rightsBanner")
    assert (
        banner is not None and banner.isVisible() and banner.text().startswith(f"Read-only: the database role {role!r}")
    )
    assert not window.acts.pause_schedule.isEnabled() and not window.acts.publish.isEnabled()
    assert not any(b.isEnabled() for b in attention_buttons(window, qtbot))


# --- a read-only SQLite file -------------------------------------------------------------


@pytest.fixture
def read_only_file(tmp_path: Path, clock: Any) -> Iterator[AppContext]:
    from PySide6.QtCore import QSettings

    path = tmp_path / "ledger.db"
    spec = load_spec(str(ROOT / "resources" / "demo" / f"{SID}.yaml"))
    with open_ledger(str(path), clock) as ledger, ledger.write() as session:
        publish(session, spec, clock)
    path.chmod(0o444)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / f"{SID}.yaml").write_bytes((ROOT / "resources" / "demo" / f"{SID}.yaml").read_bytes())
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    context = AppContext(clock=clock, workspace=workspace, ledger_url=f"sqlite:///{path}", settings=settings)
    yield context
    context.close()
    path.chmod(0o600)


def test_a_read_only_sqlite_file_is_a_read_only_window(read_only_file: AppContext, qtbot: Any) -> None:
    window = MainWindow(read_only_file)
    qtbot.addWidget(window)
    opened(window, qtbot)
    path = read_only_file.ledger_url.removeprefix("sqlite:///")  # type: ignore[union-attr]
    reason = f"read-only: the ledger file {path} is read-only for you; its owner can make it writable (chmod u+w)"
    banner = window.findChild(QLabel, "rightsBanner")
    assert banner is not None and banner.text() == "R" + reason[1:]
    for name in ("publish", "pause_schedule", "run_now", "backfill", "engine_toggle"):
        assert getattr(window.acts, name).toolTip().startswith(reason), name
    window.hub.shutdown(ShutdownMode.STOP)


# --- every decision the window can take is gated -----------------------------------------

#: The core commands that change the ledger, as the window calls them.
WRITES = {
    "publish_to",
    "publish_new",
    "change_gate",
    "run_now",
    "backfill",
    "reconcile",
    "acknowledge_failed",
    "retry_failed",
    "fence",
    "keep_materialized",
    "republish",
}
#: Where the window calls each, and what keeps a role without the right from asking.
DECISION_POINTS = {
    ("scheduler_gui/monitor/publish_dialog.py", "publish_to"): "the publish action (ACTION_ACTS)",
    ("scheduler_gui/monitor/first_run.py", "publish_new"): "the demo is seeded only when the role may publish",
    ("scheduler_gui/monitor/demo_ledger.py", "publish_new"): "a demo ledger of its own, made by this process",
    ("scheduler_gui/monitor/schedule_actions.py", "change_gate"): "the pause, resume and disable actions",
    ("scheduler_gui/monitor/hub.py", "change_gate"): "the breaking demos are paused only when the role may (Act.GATE)",
    ("scheduler_gui/monitor/schedule_actions.py", "run_now"): "the run now action",
    ("scheduler_gui/monitor/schedule_actions.py", "backfill"): "the backfill action",
    ("scheduler_gui/monitor/attention.py", "reconcile"): "the attention cards' buttons (Act.DECIDE)",
    ("scheduler_gui/monitor/attention.py", "acknowledge_failed"): "the attention cards' buttons (Act.DECIDE)",
    ("scheduler_gui/monitor/attention.py", "retry_failed"): "the attention cards' buttons (Act.DECIDE)",
    ("scheduler_gui/monitor/drift_card.py", "keep_materialized"): "the drift card's buttons (Act.DECIDE)",
    ("scheduler_gui/monitor/drift_card.py", "republish"): "the drift card's buttons (Act.DECIDE)",
}
#: The window's actions that change nothing in the ledger.
READS_ONLY = {
    "new",
    "new_from_template",
    "open",
    "import_schedules",  # writes spec files into the workspace, never the ledger
    "save",
    "save_as",
    "quit",
    "undo",
    "redo",
    "filter",
    "refresh",
    "view_designer",
    "view_occurrences",
    "view_attention",
    "view_health",
    "view_schedules",
    "view_engines",
    "engine_settings",  # the app engine's labels and trust: the app's settings, not the ledger
    "about",
    "add_to_menu",  # writes the desktop's launcher files, never the ledger
    "session_start",  # the session's autostart entry; the engine it starts is gated when it starts
}


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            names.add(name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("core."):
            names |= {f"import {alias.name}" for alias in node.names}
    return names


def test_every_decision_the_window_can_take_is_gated_by_the_rights() -> None:
    found = set()
    for path in sorted((ROOT / "scheduler_gui").rglob("*.py")):
        calls = _calls(path)
        found |= {(str(path.relative_to(ROOT)), name) for name in WRITES if name in calls and f"import {name}" in calls}
    assert found == set(DECISION_POINTS), "a new decision point: gate it with the rights and list it here"
    fields = set(Actions.__dataclass_fields__)
    assert set(ACTION_ACTS) <= fields
    assert fields - set(ACTION_ACTS) - READS_ONLY == set(), (
        "an action neither gated by the rights nor known to only read"
    )
    assert {Act(act) for act in ACTION_ACTS.values()} | {Act.DECIDE, Act.FENCE} == set(Act)


def test_a_drift_card_on_a_role_that_may_not_decide_says_why(qtbot: Any) -> None:
    from datetime import UTC, datetime

    from core.ledger.drift_attention import DriftAttention
    from scheduler_gui.monitor.drift_card import DriftCard

    item = DriftAttention("daily-ops-summary", 7, datetime(2027, 3, 1, tzinfo=UTC), "2099a", ("2026f",), 3, 3600)
    why = "the database role 'carol' is a viewer"
    card = DriftCard(item, refused=why)
    qtbot.addWidget(card)
    assert not card.note.isEnabled() and card.buttons
    for button in card.buttons.values():
        assert not button.isEnabled() and button.toolTip().endswith(f"Not here: {why}")
    free = DriftCard(item)
    qtbot.addWidget(free)
    assert all(button.isEnabled() for button in free.buttons.values())
