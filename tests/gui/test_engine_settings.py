"""The window's engine settings, as a person uses them (Engine ▸ Engine Settings…):
labels and trusted users typed, checked by the rules of ``schedctl engine run
--label/--trust``, kept in the app's settings, and carried by the window's engine
into the ledger (it announces them and applies them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from a11y_support import a11y_problems
from engine_host_support import host_fixture  # noqa: F401
from monitor_support import interval_spec
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QLineEdit
from shell_fixtures import window_fixture  # noqa: F401
from typing_support import named

from core.engine.presence import STALE_AFTER
from core.ledger.monitor_reads import engines_seen
from core.ledger.publish import publish
from core.spec.validation import parse_spec
from core.team.actor import Actor, os_user
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor import engine_settings
from scheduler_gui.monitor.engine_host import EngineHost
from scheduler_gui.monitor.engine_settings import LABELS_KEY, TRUSTS_KEY, EngineSettingsDialog, app_placement

if TYPE_CHECKING:
    from core.engine.engine import PassReport

ME = os_user()
ALPHA = Actor(ME, "alpha")


@pytest.fixture
def dialog(ctx: AppContext, qtbot) -> EngineSettingsDialog:
    made = EngineSettingsDialog(ctx.settings, actor=ALPHA)
    qtbot.addWidget(made)
    made.show()
    qtbot.waitExposed(made)
    return made


def field(dialog: EngineSettingsDialog, name: str) -> QLineEdit:
    found = named(dialog, name)
    assert isinstance(found, QLineEdit)
    return found


def type_into(qtbot, dialog: EngineSettingsDialog, name: str, text: str) -> None:
    box = field(dialog, name)
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    box.selectAll()
    QTest.keyClick(box, Qt.Key.Key_Delete)
    QTest.keyClicks(box, text)


def save(qtbot, dialog: EngineSettingsDialog) -> None:
    button = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    assert button.accessibleName() == "Save"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_typed_labels_and_trusted_users_are_saved_and_the_engine_carries_them(
    ctx: AppContext, dialog: EngineSettingsDialog, qtbot
) -> None:
    assert "host=alpha" in named(dialog, "About the engine's labels").text()
    assert "next starts" in named(dialog, "When changes apply").text()
    type_into(qtbot, dialog, "Labels", "gpu=yes, site = lab")
    type_into(qtbot, dialog, "Trusted users", "bob, carol")
    save(qtbot, dialog)
    assert dialog.result() == EngineSettingsDialog.DialogCode.Accepted and not dialog.isVisible()
    assert (ctx.settings.value(LABELS_KEY), ctx.settings.value(TRUSTS_KEY)) == ("gpu=yes, site=lab", "bob, carol")
    placement = app_placement(ctx.settings, ALPHA)
    assert placement.labels == {"host": "alpha", "user": ME, "gpu": "yes", "site": "lab"}
    assert placement.trusts == {ME, "bob", "carol"}
    again = EngineSettingsDialog(ctx.settings, actor=ALPHA)
    qtbot.addWidget(again)
    assert (field(again, "Labels").text(), field(again, "Trusted users").text()) == ("gpu=yes, site=lab", "bob, carol")


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        pytest.param("gpu", "Labels: 'gpu': write KEY=VALUE, e.g. gpu=yes", id="no_equals"),
        pytest.param("gpu=yes, =x", "Labels: '=x': the label's name is empty; write KEY=VALUE", id="empty_name"),
        pytest.param("host=beta", "Labels: 'host=beta': host is built in (the engine's own); choose another name",
                     id="built_in"),
        pytest.param("any=true", "Labels: 'any=true': any is reserved (runsOn: {any: true}); choose another name",
                     id="reserved"),
    ],
)  # fmt: skip
def test_a_bad_label_is_refused_with_a_message_and_changes_nothing(
    ctx: AppContext, dialog: EngineSettingsDialog, qtbot, labels: str, message: str
) -> None:
    ctx.settings.setValue(LABELS_KEY, "rack=r2")
    type_into(qtbot, dialog, "Labels", labels)
    type_into(qtbot, dialog, "Trusted users", "bob")
    save(qtbot, dialog)
    problem = named(dialog, "Problem")
    assert isinstance(problem, QLabel)
    assert problem.isVisible() and problem.text() == message
    assert dialog.isVisible(), "the dialog stays open to be corrected"
    assert ctx.settings.value(LABELS_KEY) == "rack=r2" and ctx.settings.value(TRUSTS_KEY) is None
    assert field(dialog, "Labels").hasFocus()


def test_users_are_separated_by_commas_or_spaces(ctx: AppContext, dialog: EngineSettingsDialog, qtbot) -> None:
    type_into(qtbot, dialog, "Trusted users", "bob carol,  dave, bob")
    save(qtbot, dialog)
    assert ctx.settings.value(TRUSTS_KEY) == "bob, carol, dave"
    assert app_placement(ctx.settings, ALPHA).trusts == {ME, "bob", "carol", "dave"}


def test_every_control_of_the_dialog_is_named(dialog: EngineSettingsDialog) -> None:
    assert not a11y_problems(dialog)


def test_the_engine_menu_opens_the_settings(window: MainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[EngineSettingsDialog] = []

    def exec_(self: EngineSettingsDialog) -> int:
        shown.append(self)
        return 0

    monkeypatch.setattr(EngineSettingsDialog, "exec", exec_)
    engine_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "E&ngine")
    assert window.acts.engine_settings in engine_menu.actions()
    window.acts.engine_settings.trigger()
    assert [d.windowTitle() for d in shown] == ["Engine Settings"]


def test_the_window_engine_announces_and_applies_the_settings(
    ctx: AppContext, host: EngineHost, qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")
    engine_settings.save_settings(ctx.settings, "gpu=yes", "bob")
    with ctx.ledger.write() as session:
        for sid, gpu in (("on-gpu", "yes"), ("off-gpu", "no")):
            spec = parse_spec(interval_spec(sid, {"argv": ["/bin/true"]}, runsOn={"gpu": gpu}))
            publish(session, spec, ctx.clock, actor=ALPHA)
    reports: list[PassReport] = []
    host.passFinished.connect(reports.append)
    with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "running"):
        host.start()
    qtbot.waitUntil(lambda: bool(reports), timeout=10_000)
    [seen] = engines_seen(ctx.ledger, ctx.clock.now(), STALE_AFTER)
    assert seen.labels == {"host": "alpha", "user": ME, "gpu": "yes"}
    assert set(seen.trusts or ()) == {ME, "bob"}
    assert seen.refuses == (("off-gpu", "runs on an engine with gpu=no"),)
    assert reports[0].refused == {"off-gpu": "revision 1 runs on an engine with gpu=no"}


def test_settings_edited_into_nonsense_stop_the_engine_with_a_message(ctx: AppContext, host: EngineHost, qtbot) -> None:
    ctx.settings.setValue(LABELS_KEY, "user=root")
    with qtbot.waitSignal(host.errorOccurred, timeout=10_000) as said:
        host.start()
    assert said.args == [
        "The engine settings cannot be used: Labels: 'user=root': user is built in (the engine's own);"
        " choose another name; change them in Engine ▸ Engine Settings…"
    ]
    assert host.state == "error"
    assert engines_seen(ctx.ledger, ctx.clock.now(), STALE_AFTER) == []
