"""The ledger's alert settings in Engine ▸ Engine Settings…, as a person uses them: routes
typed one a line, the states ticked, the SMTP fields filled; Save writes them to the ledger
(what ``schedctl alerts list`` shows), a bad route or server is refused with a message naming
the field and nothing is written."""

from __future__ import annotations

import pytest
from a11y_support import a11y_problems
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QLineEdit, QPlainTextEdit
from typing_support import named

from core.ledger.alert_queries import AlertSettings, load_alert_settings, save_alert_settings
from core.team.alert_routes import Smtp
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.engine_settings import EngineSettingsDialog

ALL = frozenset({"FAILED", "UNKNOWN_EFFECT", "MISFIRE_EXPIRED"})


def _open(ctx: AppContext, qtbot) -> EngineSettingsDialog:
    made = EngineSettingsDialog(ctx.settings, ledger=(ctx.ledger, ctx.clock))
    qtbot.addWidget(made)
    made.show()
    qtbot.waitExposed(made)
    assert made.alerts is not None
    qtbot.waitUntil(lambda: made.alerts is not None and made.alerts.loaded is not None, timeout=10_000)
    return made


def _type(qtbot, dialog: EngineSettingsDialog, name: str, text: str) -> None:
    box = named(dialog, name)
    assert isinstance(box, QLineEdit | QPlainTextEdit)
    qtbot.mouseClick(box.viewport() if isinstance(box, QPlainTextEdit) else box, Qt.MouseButton.LeftButton)
    box.selectAll()
    QTest.keyClick(box, Qt.Key.Key_Delete)
    QTest.keyClicks(box, text)


def _save(qtbot, dialog: EngineSettingsDialog) -> None:
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Save), Qt.MouseButton.LeftButton)


def test_typed_routes_and_mail_settings_are_written_to_the_ledger(ctx: AppContext, qtbot) -> None:
    dialog = _open(ctx, qtbot)
    routes = named(dialog, "Alert routes")
    assert isinstance(routes, QPlainTextEdit) and routes.toPlainText() == ""
    _type(qtbot, dialog, "Alert routes", "mailto:ops@example.com")
    QTest.keyClick(routes, Qt.Key.Key_Return)
    QTest.keyClicks(routes, "secret:TEAM_HOOK")
    missed = named(dialog, "Missed")
    assert isinstance(missed, QCheckBox)
    qtbot.mouseClick(missed, Qt.MouseButton.LeftButton)
    _type(qtbot, dialog, "SMTP server", "smtp.example.com")
    _type(qtbot, dialog, "User", "tm")
    _type(qtbot, dialog, "Password secret", "SMTP_PW")
    _type(qtbot, dialog, "From", "tm@example.com")
    _save(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10_000)
    assert dialog.result() == EngineSettingsDialog.DialogCode.Accepted
    assert load_alert_settings(ctx.ledger) == AlertSettings(
        ("mailto:ops@example.com", "{secret: TEAM_HOOK}"),
        frozenset({"FAILED", "UNKNOWN_EFFECT"}),
        Smtp("smtp.example.com", 587, "starttls", "tm", "SMTP_PW", "tm@example.com"),
    )


def test_the_ledgers_settings_are_shown_when_it_opens(ctx: AppContext, qtbot) -> None:
    smtp = Smtp("127.0.0.1", 2525, "none", None, None, "tm@example.com")
    save_alert_settings(ctx.ledger, AlertSettings(("https://hooks.example.com/tm",), ALL, smtp), ctx.clock.now())
    dialog = _open(ctx, qtbot)
    routes = named(dialog, "Alert routes")
    assert isinstance(routes, QPlainTextEdit) and routes.toPlainText() == "https://hooks.example.com/tm"
    host, sender = named(dialog, "SMTP server"), named(dialog, "From")
    assert isinstance(host, QLineEdit) and isinstance(sender, QLineEdit)
    assert (host.text(), sender.text()) == ("127.0.0.1", "tm@example.com")
    assert "through these routes" in named(dialog, "Alert settings status").text()


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        pytest.param("Alert routes", "ftp://example.com/x", "Alert routes: route 'ftp://example.com/x':", id="route"),
        pytest.param("Alert routes", "http://example.com/x", "plain http to another machine", id="plain_http"),
        pytest.param("Password secret", "SMTP_PW", "User: a password needs a user", id="password_without_user"),
    ],
)
def test_a_bad_setting_is_refused_naming_its_field_and_nothing_is_written(
    ctx: AppContext, qtbot, field: str, text: str, message: str
) -> None:
    dialog = _open(ctx, qtbot)
    if field == "Password secret":
        _type(qtbot, dialog, "SMTP server", "smtp.example.com")
    _type(qtbot, dialog, field, text)
    _save(qtbot, dialog)
    problem = named(dialog, "Problem")
    assert dialog.isVisible() and problem.isVisible() and message in problem.text()
    assert load_alert_settings(ctx.ledger) == AlertSettings((), ALL, None)


def test_every_alert_control_is_named(ctx: AppContext, qtbot) -> None:
    assert not a11y_problems(_open(ctx, qtbot))
