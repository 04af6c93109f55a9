"""A schedule's own alert routes in the designer (scheduler_gui.designer.alert_routes), used as a
person does: the three choices write ``alerts`` as one undoable edit each, a route is typed and
its states ticked, a route that is not one is refused naming its key and changes nothing, and a
file's routes are shown and saved in place with its comments."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from a11y_support import a11y_problems
from alert_servers import hook_server
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QCheckBox, QLineEdit, QPushButton, QRadioButton
from typing_support import named, problem_text

from core.ledger.alert_queries import AlertSettings, save_alert_settings
from scheduler_gui.context import AppContext
from scheduler_gui.designer.alert_routes import read_routes, rows_of
from scheduler_gui.designer.recovery import RecoveryPanel
from scheduler_gui.workspace.document import SpecDocument

DEFAULT = "Alerts: The ledger's default routes"
NO_ONE = "Alerts: No one (alerts: [])"
OWN = "Alerts: These routes"
ALL = frozenset({"FAILED", "UNKNOWN_EFFECT", "MISFIRE_EXPIRED"})


@pytest.fixture
def panel(document: SpecDocument, ctx: AppContext, qtbot) -> RecoveryPanel:
    widget = RecoveryPanel(document, ctx)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def click(qtbot, root: RecoveryPanel, name: str) -> None:
    button = named(root, name)
    assert isinstance(button, (QRadioButton, QPushButton, QCheckBox))
    if isinstance(button, QPushButton):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        return
    # On its words: a radio button takes the row's width, and only its mark and words are clicks.
    at = QPoint(button.fontMetrics().horizontalAdvance(button.text()) // 2 + 20, button.height() // 2)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=at)


def checked(root: RecoveryPanel) -> str:
    [on] = [b.accessibleName() for b in root.alerts.findChildren(QRadioButton) if b.isChecked()]
    return on


def type_route(qtbot, root: RecoveryPanel, number: int, text: str) -> None:
    edit = named(root, f"Alert route {number}")
    assert isinstance(edit, QLineEdit)
    qtbot.keyClicks(edit, text)


def test_the_default_routes_apply_until_the_schedule_has_its_own(panel: RecoveryPanel, document: SpecDocument) -> None:
    assert document.value("alerts") is None and checked(panel) == DEFAULT
    meaning = named(panel, "Alerts: meaning")
    assert "the ledger's default routes apply" in meaning.text() and "Engine Settings" in meaning.text()
    assert not panel.alerts.rows_box.isVisibleTo(panel)


def test_a_typed_route_reaches_the_spec_and_undo_takes_it_back(
    panel: RecoveryPanel, document: SpecDocument, qtbot
) -> None:
    click(qtbot, panel, OWN)
    assert problem_text(panel, "Alerts") == (
        "⚠ route 1 (alerts[0].to): type where to tell: mailto:ADDRESS, an https:// URL, or secret:NAME"
    )
    assert document.value("alerts") is None and not document.can_save  # Save waits for the address
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    assert document.value("alerts") == [{"to": "mailto:ops@example.com"}]  # all three states: on left out
    assert problem_text(panel, "Alerts") == "" and document.can_save
    click(qtbot, panel, "Alert route 1: Missed")
    assert document.value("alerts") == [{"to": "mailto:ops@example.com", "on": ["FAILED", "UNKNOWN_EFFECT"]}]
    assert document.undo_stack.undoText() == "Edit alert routes"

    document.undo_stack.undo()
    assert document.value("alerts") == [{"to": "mailto:ops@example.com"}]
    assert named(panel, "Alert route 1: Missed").isChecked()  # type: ignore[attr-defined]
    document.undo_stack.undo()  # the typing was one step
    assert document.value("alerts") is None and checked(panel) == DEFAULT
    assert panel.alerts.route_rows == []


def test_no_one_is_an_empty_list_and_a_secret_is_a_reference(
    panel: RecoveryPanel, document: SpecDocument, qtbot
) -> None:
    click(qtbot, panel, NO_ONE)
    assert document.value("alerts") == [] and "not even the ledger's default" in named(panel, "Alerts: meaning").text()
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "secret:TEAM_HOOK")
    click(qtbot, panel, "Alerts: add a route")
    type_route(qtbot, panel, 2, "https://hooks.example.com/tm")
    assert document.value("alerts") == [{"to": {"secret": "TEAM_HOOK"}}, {"to": "https://hooks.example.com/tm"}]
    click(qtbot, panel, "Alert route 1: remove")
    assert document.value("alerts") == [{"to": "https://hooks.example.com/tm"}]
    assert named(panel, "Alert route 1").text() == "https://hooks.example.com/tm"  # type: ignore[attr-defined]
    click(qtbot, panel, DEFAULT)
    assert document.value("alerts") is None and document.undo_stack.undoText() == "Alerts: the ledger's default routes"


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        pytest.param(
            "ops@example.com",
            "route 2 (alerts[1].to): 'ops@example.com' is not a route; "
            "write mailto:ADDRESS, an https:// URL, or {secret: NAME}",
            id="no_scheme",
        ),
        pytest.param(
            "http://hooks.example.com/x",
            "route 2 (alerts[1].to): 'http://hooks.example.com/x' is plain http to another machine; "
            "use https://, or http:// only to localhost",
            id="plain_http",
        ),
        pytest.param("secret:1bad", "route 2 (alerts[1].to): secret '1bad'", id="secret_name"),
    ],
)
def test_a_bad_route_is_refused_and_the_spec_keeps_its_routes(
    panel: RecoveryPanel, document: SpecDocument, qtbot, typed: str, why: str
) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    click(qtbot, panel, "Alerts: add a route")
    steps = document.undo_stack.count()
    type_route(qtbot, panel, 2, typed)
    assert problem_text(panel, "Alerts").startswith(f"⚠ {why}")
    assert document.value("alerts") == [{"to": "mailto:ops@example.com"}] and document.undo_stack.count() == steps
    assert not document.can_save
    assert named(panel, "Alert route 2").text() == typed  # type: ignore[attr-defined]  # kept, to be fixed
    click(qtbot, panel, "Alert route 2: remove")
    assert problem_text(panel, "Alerts") == "" and document.can_save


def test_a_route_given_twice_is_refused(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "secret:HOOK")
    click(qtbot, panel, "Alerts: add a route")
    type_route(qtbot, panel, 2, "secret:HOOKS")  # a route of its own, on the way
    assert document.value("alerts") == [{"to": {"secret": "HOOK"}}, {"to": {"secret": "HOOKS"}}]
    qtbot.keyClick(named(panel, "Alert route 2"), Qt.Key.Key_Backspace)
    assert (
        problem_text(panel, "Alerts") == "⚠ route 2 (alerts[1].to): secret:HOOK is listed twice; give each route once"
    )
    assert document.value("alerts") == [{"to": {"secret": "HOOK"}}, {"to": {"secret": "HOOKS"}}]
    assert not document.can_save


def test_a_route_told_of_nothing_is_refused(panel: RecoveryPanel, document: SpecDocument, qtbot) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    for words in ("Failed", "Unknown effect"):
        click(qtbot, panel, f"Alert route 1: {words}")
    assert document.value("alerts") == [{"to": "mailto:ops@example.com", "on": ["MISFIRE_EXPIRED"]}]
    click(qtbot, panel, "Alert route 1: Missed")
    assert problem_text(panel, "Alerts") == "⚠ route 1 (alerts[0].on): tick at least one state, or remove the route"
    assert document.value("alerts") == [{"to": "mailto:ops@example.com", "on": ["MISFIRE_EXPIRED"]}]


def test_every_part_is_named_for_a_screen_reader(panel: RecoveryPanel, qtbot) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    assert a11y_problems(panel.alerts) == []


def test_tab_reads_the_routes_in_order(panel: RecoveryPanel, qtbot) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    click(qtbot, panel, "Alerts: add a route")
    start = named(panel, OWN)
    start.setFocus()
    names = []
    for _ in range(12):
        focused = QApplication.focusWidget()
        assert focused is not None
        names.append(focused.accessibleName())
        QTest.keyClick(focused, Qt.Key.Key_Tab)
    row = ["", ": Failed", ": Unknown effect", ": Missed", ": remove"]
    assert names == [
        OWN,
        *(f"Alert route 1{r}" for r in row),
        *(f"Alert route 2{r}" for r in row),
        "Alerts: add a route",
    ]


@pytest.mark.parametrize(
    ("before", "rows", "after"),
    [
        pytest.param(None, [("mailto:a@b.c", ALL)], [{"to": "mailto:a@b.c"}], id="all_states_leave_on_out"),
        pytest.param(
            [{"to": "mailto:a@b.c", "on": ["MISFIRE_EXPIRED", "FAILED", "UNKNOWN_EFFECT"]}],
            [("mailto:x@b.c", ALL)],
            [{"to": "mailto:x@b.c", "on": ["FAILED", "UNKNOWN_EFFECT", "MISFIRE_EXPIRED"]}],
            id="a_written_on_stays_written",
        ),
        pytest.param(None, [(" {secret: HOOK} ", ALL)], [{"to": {"secret": "HOOK"}}], id="secret_braces"),
        pytest.param(None, [], [], id="no_rows_no_one"),
    ],
)
def test_rows_read_as_the_spec_writes_them(before: object, rows: list, after: list) -> None:
    assert read_routes(rows, before) == after
    assert [(t, k) for t, k in rows_of(after)] == [
        (t.strip().replace("{secret: ", "secret:").rstrip("}"), k) for t, k in rows
    ]


DEMO_TEXT = (Path(__file__).resolve().parents[2] / "resources" / "demo" / "daily-ops-summary.yaml").read_text()


@pytest.fixture
def open_file(ctx: AppContext, qtbot, tmp_path: Path) -> Iterator[Callable[[str], tuple[RecoveryPanel, SpecDocument]]]:
    """Open the demo schedule with ``tail`` added to its file, in a recovery panel on screen."""

    def opened(tail: str) -> tuple[RecoveryPanel, SpecDocument]:
        path = tmp_path / "ops.yaml"
        path.write_text(DEMO_TEXT + tail, encoding="utf-8")
        document = SpecDocument()
        document.load(path)
        widget = RecoveryPanel(document, ctx)
        qtbot.addWidget(widget)
        widget.show()
        return widget, document

    yield opened


def test_a_files_routes_are_shown_and_saved_in_place(
    open_file: Callable[[str], tuple[RecoveryPanel, SpecDocument]], qtbot
) -> None:
    shown, document = open_file("# who is told\nalerts:  # the on-call box\n  - to: mailto:ops@example.com\n")
    assert checked(shown) == OWN and named(shown, "Alert route 1").text() == "mailto:ops@example.com"  # type: ignore[attr-defined]
    click(qtbot, shown, "Alerts: add a route")
    type_route(qtbot, shown, 2, "https://hooks.example.com/tm")
    click(qtbot, shown, "Alert route 2: Unknown effect")
    path = document.save()
    text = path.read_text(encoding="utf-8")
    assert text.startswith(DEMO_TEXT) and "# who is told\n" in text and "# the on-call box" in text
    assert SpecDocument.read_mapping(path)["alerts"] == [
        {"to": "mailto:ops@example.com"},
        {"to": "https://hooks.example.com/tm", "on": ["FAILED", "MISFIRE_EXPIRED"]},
    ]


def test_a_wrong_route_in_a_file_is_shown_with_its_problem(
    open_file: Callable[[str], tuple[RecoveryPanel, SpecDocument]], qtbot
) -> None:
    shown, document = open_file("alerts:\n  - to: ftp://example.com\n")
    assert checked(shown) == OWN and not document.can_save
    assert "ftp://example.com" in problem_text(shown, "Alerts") and "alerts[0].to" in problem_text(shown, "Alerts")
    click(qtbot, shown, NO_ONE)
    assert document.value("alerts") == [] and document.can_save


def test_a_test_alert_goes_to_each_route_and_says_what_came_back(
    panel: RecoveryPanel, document: SpecDocument, qtbot
) -> None:
    test = named(panel, "Alerts: send a test alert")
    with hook_server() as hook:
        click(qtbot, panel, OWN)
        assert not test.isEnabled()  # nothing to send to yet
        type_route(qtbot, panel, 1, hook.url)
        assert test.isEnabled()
        qtbot.mouseClick(test, Qt.MouseButton.LeftButton)
        assert panel.alerts.wait()
        line = named(panel, "Alerts: test")
        qtbot.waitUntil(lambda: "delivered" in line.text())  # type: ignore[attr-defined]
        assert line.text() == f"✔ delivered to {hook.url}: HTTP 200 OK"  # type: ignore[attr-defined]
        [got] = hook.received
    assert got.body["state"] == "TEST" and got.body["scheduleId"] == document.value("scheduleId")
    assert document.undo_stack.undoText() == "Edit alert routes"  # a test changes nothing


def test_a_mail_route_without_smtp_settings_says_so(panel: RecoveryPanel, qtbot) -> None:
    click(qtbot, panel, OWN)
    type_route(qtbot, panel, 1, "mailto:ops@example.com")
    qtbot.mouseClick(named(panel, "Alerts: send a test alert"), Qt.MouseButton.LeftButton)
    assert panel.alerts.wait()
    line = named(panel, "Alerts: test")
    qtbot.waitUntil(lambda: "delivered" in line.text())  # type: ignore[attr-defined]
    assert line.text() == (  # type: ignore[attr-defined]
        "✖ not delivered to mailto:ops@example.com: no SMTP server is set for mailto: routes; "
        "set one with schedctl alerts set --smtp-host"
    )


def test_the_default_choice_names_the_ledgers_routes(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    first = RecoveryPanel(document, ctx)
    qtbot.addWidget(first)
    first.show()
    line = named(first, "Alerts: the ledger's routes now")
    assert line.text() == "No ledger is open to say which routes those are."  # type: ignore[attr-defined]
    settings = AlertSettings(("mailto:oncall@example.com",), frozenset({"FAILED", "MISFIRE_EXPIRED"}), None)
    save_alert_settings(ctx.ledger, settings, ctx.clock.now())
    shown = RecoveryPanel(document, ctx)
    qtbot.addWidget(shown)
    shown.show()
    assert shown.alerts.wait()
    line = named(shown, "Alerts: the ledger's routes now")
    qtbot.waitUntil(lambda: "oncall" in line.text())  # type: ignore[attr-defined]
    assert line.text() == "On this ledger those are mailto:oncall@example.com, told of runs failed, missed."  # type: ignore[attr-defined]
    click(qtbot, shown, OWN)
    assert not line.isVisibleTo(shown)


def test_a_ledger_without_default_routes_says_no_one_is_told(panel: RecoveryPanel, ctx: AppContext, qtbot) -> None:
    assert ctx.ledger is not None  # opened now: the panel read before, without one
    click(qtbot, panel, NO_ONE)
    click(qtbot, panel, DEFAULT)
    assert panel.alerts.wait()
    line = named(panel, "Alerts: the ledger's routes now")
    qtbot.waitUntil(lambda: "no default routes" in line.text())  # type: ignore[attr-defined]
    assert line.text() == "This ledger has no default routes: no one is told until some are set there."  # type: ignore[attr-defined]
