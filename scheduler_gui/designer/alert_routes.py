"""Who is told when a run needs a person: the schedule's own ``alerts:`` routes
(docs/spec.md, "Who is told").

Three choices, as in "Runs on": the ledger's default routes (``alerts`` left
out: Engine ▸ Engine Settings…, ``schedctl alerts set``), no one
(``alerts: []``), or routes of its own, one row each: where to tell
(``mailto:ADDRESS``, an ``https://`` URL, or ``secret:NAME`` for a route kept
as a secret on the engine's host) and the states it hears of. Each choice and
each finished change of the rows is one undoable edit; rows that are not
routes yet stay with their problem under them, and Save waits, as the other
list fields do. The rows are read by the rules the spec is validated by
(:func:`core.team.alert_routes.route_problem`, :func:`core.team.secrets.name_problem`).
"Send a test alert" sends each route one test alert off the GUI thread, as
``schedctl alerts test`` does (:func:`core.desktop.notify.alert_send.send_test`), and
says what came back. Under the default choice a line names the ledger's
default routes, read off the GUI thread (or says there are none: then no one
is told).
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.enums import AlertKind
from core.team.alert_routes import DEFAULT_KINDS, route_key, route_problem
from scheduler_gui.a11y import accessible, explain
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.designer.choice_buttons import choice_buttons
from scheduler_gui.designer.field_problem import FieldProblem
from scheduler_gui.designer.notes import meaning_label, problem_label, show_problems
from scheduler_gui.tab_order import order_tabs
from scheduler_gui.workspace.document import SpecDocument

#: The spec's key, and the field name the rows' problem is kept under in the document.
KEY = "alerts"
DEFAULT, NO_ONE, OWN = "default", "no one", "own"
#: (choice, words on its button, what it means).
CHOICES = (
    (DEFAULT, "The ledger's default routes", "No routes of its own (alerts left out): the ledger's default routes "
     "apply, set in Engine ▸ Engine Settings… or with schedctl alerts set"),
    (NO_ONE, "No one (alerts: [])", "alerts: [] tells no one, not even the ledger's default routes"),
    (OWN, "These routes", "Its own routes, one a row (alerts); the ledger's default routes do not apply"),
)  # fmt: skip
#: Each state's box, in the window's words (as in Engine Settings).
KIND_WORDS = {
    AlertKind.FAILED: ("Failed", "runs that failed with their attempts used up (FAILED)"),
    AlertKind.UNKNOWN_EFFECT: ("Unknown effect", "runs whose effect nobody can vouch for (UNKNOWN_EFFECT)"),
    AlertKind.MISFIRE_EXPIRED: ("Missed", "runs missed and expired by the misfire policy (MISFIRE_EXPIRED)"),
}
TEST_TIP = (
    "Send one test alert to each route now and say what came back (as schedctl alerts test); mail goes "
    "through the ledger's SMTP settings"
)
#: What a test alert's reason says.
TEST_REASON = "a test alert from the Tidemark designer"
_ALL = frozenset(k.value for k in DEFAULT_KINDS)
_SECRET = re.compile(r"\{?\s*secret\s*:\s*([^{}\s]*)\s*\}?")
#: A row as shown: the address text and the states ticked.
Row = tuple[str, frozenset[str]]


def choice_of(alerts: Any) -> str:
    """Which choice a stored ``alerts`` is."""
    if alerts is None:
        return DEFAULT
    return NO_ONE if alerts == [] else OWN


def shown_to(to: Any) -> str:
    """A route's ``to`` as its row shows it: the text, or ``secret:NAME``."""
    if isinstance(to, dict) and set(to) == {"secret"}:
        return f"secret:{to['secret']}"
    return "" if to is None else str(to)


def rows_of(alerts: Any) -> list[Row]:
    """A stored ``alerts`` (or anything in its place) as the rows to show; ``on`` left out is all."""
    rows: list[Row] = []
    for route in alerts if isinstance(alerts, list) else []:
        route = route if isinstance(route, dict) else {"to": route}
        on = route.get("on")
        kinds = frozenset(str(k) for k in on) & _ALL if isinstance(on, list) else _ALL
        rows.append((shown_to(route.get("to")), kinds))
    return rows


def read_to(text: str) -> str | dict[str, str]:
    """An address as typed, as the spec holds it: a route text, or ``{secret: NAME}`` for ``secret:NAME``;
    ValueError saying why it is no route."""
    text = text.strip()
    match = _SECRET.fullmatch(text)
    if match:
        from core.team.secrets import name_problem

        why = name_problem(match.group(1))
        if why is not None:
            raise ValueError(f"secret {match.group(1)!r}: {why}")
        return {"secret": match.group(1)}
    if not text:
        raise ValueError("type where to tell: mailto:ADDRESS, an https:// URL, or secret:NAME")
    why = route_problem(text)
    if why is not None:
        raise ValueError(why)
    return text


def read_routes(rows: list[Row], before: Any) -> list[dict[str, Any]]:
    """The rows as the spec's ``alerts``; ValueError naming the route (and its key) that is wrong.

    A route told of every state leaves ``on`` out unless the same route of ``before`` wrote it.
    """
    old = before if isinstance(before, list) else []
    routes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, (text, kinds) in enumerate(rows):
        where = f"route {i + 1} (alerts[{i}]"
        try:
            to = read_to(text)
        except ValueError as exc:
            raise ValueError(f"{where}.to): {exc}") from None
        if shown_to(to) in seen:
            raise ValueError(f"{where}.to): {shown_to(to)} is listed twice; give each route once")
        seen.add(shown_to(to))
        if not kinds:
            raise ValueError(f"{where}.on): tick at least one state, or remove the route")
        route: dict[str, Any] = {"to": to}
        kept = old[i] if i < len(old) and isinstance(old[i], dict) else {}
        if kinds != _ALL or "on" in kept:
            route["on"] = [k.value for k in AlertKind if k.value in kinds]
        routes.append(route)
    return routes


def defaults_text(settings: object) -> str:
    """What the ledger's default routes are, in a line under the default choice."""
    from core.ledger.alert_queries import AlertSettings

    assert isinstance(settings, AlertSettings)
    if not settings.routes:
        return "This ledger has no default routes: no one is told until some are set there."
    told = ", ".join(words.lower() for kind, (words, _what) in KIND_WORDS.items() if kind.value in settings.kinds)
    return f"On this ledger those are {', '.join(settings.routes)}, told of runs {told}."


class RouteRow(QWidget):
    """One route: its address, the states it hears of, and Remove."""

    edited = Signal(bool)
    """The row changed here; True when its address was typed (consecutive typing is one undo step)."""
    removed = Signal()

    def __init__(self, number: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        name = f"Alert route {number}"
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.address = QLineEdit(self)
        self.address.setPlaceholderText("mailto:ops@example.com · https://… · secret:NAME")
        accessible(
            self.address,
            name,
            "Where to tell: mailto:ADDRESS, an https:// URL (http:// only to this machine), or secret:NAME for a "
            "route kept as a secret on the engine's host",
        )
        layout.addWidget(self.address, 1)
        self.kinds: dict[str, QCheckBox] = {}
        for kind, (words, what) in KIND_WORDS.items():
            box = QCheckBox(words, self)
            accessible(box, f"{name}: {words}", f"Tell this route of {what}")
            box.setChecked(True)
            box.clicked.connect(lambda _checked=False: self.edited.emit(False))
            self.kinds[kind.value] = box
            layout.addWidget(box)
        self.remove_button = QPushButton("Remove", self)
        accessible(self.remove_button, f"{name}: remove", "Remove this route")
        self.remove_button.clicked.connect(self.removed)
        layout.addWidget(self.remove_button)
        self.address.textEdited.connect(lambda _text: self.edited.emit(True))

    def row(self) -> Row:
        return self.address.text(), frozenset(k for k, box in self.kinds.items() if box.isChecked())

    def show_row(self, row: Row) -> None:
        text, kinds = row
        if self.address.text() != text:
            self.address.setText(text)
        for kind, box in self.kinds.items():
            box.setChecked(kind in kinds)


class AlertRoutesBox(QGroupBox):
    """Edits the document's ``alerts`` and says whose routes apply."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("Who is told (alerts)", parent)
        self._doc = document
        self._ctx = ctx
        self._syncing = False
        layout = QVBoxLayout(self)
        self.group, self.buttons = choice_buttons(self, layout, "Alerts", CHOICES, self.choose)
        self.rows_box = QWidget(self)
        self.rows_layout = QVBoxLayout(self.rows_box)
        self.rows_layout.setContentsMargins(24, 0, 0, 0)  # under "These routes", whose rows they are
        self.route_rows: list[RouteRow] = []
        self.add_button = QPushButton("Add a route", self.rows_box)
        accessible(self.add_button, "Alerts: add a route", "Add a route to tell (mailto:, https:// or secret:NAME)")
        self.add_button.clicked.connect(self.add_route)
        add_row = QHBoxLayout()
        add_row.addWidget(self.add_button)
        self.test_button = QPushButton("Send a test alert", self.rows_box)
        accessible(self.test_button, "Alerts: send a test alert", TEST_TIP)
        self.test_button.clicked.connect(self.send_test)
        add_row.addWidget(self.test_button)
        add_row.addStretch(1)
        self.rows_layout.addLayout(add_row)
        self.test_line = meaning_label(self.rows_box, "Alerts: test")
        self.test_line.hide()
        self.rows_layout.addWidget(self.test_line)
        self._tester = LatestOnly(self)
        self._tester.done.connect(lambda lines: self._say_test("\n".join(lines)))
        self._tester.failed.connect(lambda message: self._say_test(f"No test alert was sent: {message}"))
        layout.addWidget(self.rows_box)
        self.problem_line = problem_label(self, "Alerts: problem")
        layout.addWidget(self.problem_line)
        self.meaning = meaning_label(self, "Alerts: meaning")
        layout.addWidget(self.meaning)
        self.defaults_line = QLabel(self)  # the consequence: in the text's own colour, not a quiet note
        self.defaults_line.setWordWrap(True)
        self.defaults_line.setAccessibleName("Alerts: the ledger's routes now")
        layout.addWidget(self.defaults_line)
        self._defaults = LatestOnly(self)
        self._defaults.done.connect(lambda settings: self._say_defaults(defaults_text(settings)))
        self._defaults.failed.connect(
            lambda message: self._say_defaults(f"The ledger's default routes cannot be read: {message}")
        )
        self._defaults_shown = False
        self.problem = FieldProblem(document, KEY, KEY, self._show_problems)
        document.changed.connect(self.sync)
        self.sync()

    # --- writing ------------------------------------------------------------------
    def choose(self, choice: str) -> None:
        """Make ``choice`` the document's ``alerts`` (own routes: a first row to type, or those shown)."""
        if self._syncing or (choice == OWN and self.problem.message):
            return  # the rows being fixed are the routes already
        if choice == OWN:
            if choice_of(self._doc.value(KEY)) != OWN:
                self.add_route()
            return
        self.problem.clear()
        if choice == DEFAULT:
            self._doc.set_value(KEY, None, label="Alerts: the ledger's default routes")
        else:
            self._doc.set_value(KEY, [], label="Alerts: no one")
        self.sync()

    def add_route(self) -> None:
        """A new row, all states ticked, its address to type (the document waits for it)."""
        row = self._append_row()
        self._rows_edited(typed=False)
        row.address.setFocus()

    def _append_row(self) -> RouteRow:
        row = RouteRow(len(self.route_rows) + 1, self.rows_box)
        row.edited.connect(lambda typed: self._rows_edited(typed=typed))
        row.removed.connect(lambda row=row: self._remove(row))
        self.route_rows.append(row)
        self.rows_layout.insertWidget(len(self.route_rows) - 1, row)  # above "Add a route"
        row.show()  # now, not when the layout gets to it: Tab and a screen reader find it at once
        # Made after "Add a route": Tab reads it after the row before it, then comes to the button.
        order_tabs(self.buttons[OWN], *self.route_rows, self.add_button, self.test_button)
        return row

    def _remove(self, row: RouteRow) -> None:
        rows = [r.row() for r in self.route_rows if r is not row]
        self._show_rows(rows)
        self._rows_edited(typed=False)

    def _rows_edited(self, *, typed: bool) -> None:
        """The rows changed: written when every row is a route, else the problem under them."""
        if self._syncing:
            return
        before = self._doc.value(KEY)
        try:
            routes = read_routes([r.row() for r in self.route_rows], before)
        except ValueError as exc:
            self.problem.set(str(exc), before)
            self._show_choice(OWN)
            return
        self.problem.clear()
        self._doc.set_value(KEY, routes, label="Edit alert routes", merge=typed)

    def send_test(self) -> None:
        """Send each of the schedule's own routes one test alert, off the GUI thread; the line under the
        buttons says what each route answered."""
        routes = self._doc.value(KEY)
        if self.problem.message or choice_of(routes) != OWN or self._tester.busy:
            return
        stored = [route_key(route.get("to")) for route in routes]
        ctx, schedule_id = self._ctx, str(self._doc.value("scheduleId") or "tidemark")

        def work() -> list[str]:
            from core.desktop.notify.alert_send import send_test
            from core.ledger.alert_queries import load_alert_settings

            # Mail, or a secret that may hold mail, goes through the ledger's SMTP settings.
            mail = not all(route.startswith("http") for route in stored)
            smtp = load_alert_settings(ctx.ledger).smtp if mail else None
            lines = []
            for route in stored:
                sent = send_test(route, smtp, ctx.clock.now(), schedule_id=schedule_id, reason=TEST_REASON)
                lines.append(f"{'✔ delivered' if sent.ok else '✖ not delivered'} to {route}: {sent.said}")
            return lines

        self._say_test(f"Sending a test alert to {len(stored)} route{'s' if len(stored) != 1 else ''}…")
        self._tester.submit(work)

    def _say_test(self, text: str) -> None:
        self.test_line.setText(text)
        self.test_line.setAccessibleDescription(text)
        self.test_line.show()

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until a test alert is sent and the default routes are read (tests, screenshots); the
        lines change through the event loop."""
        return self._tester.wait(msecs) and self._defaults.wait(msecs)

    def read_defaults(self) -> None:
        """Read the ledger's default routes for the line under the default choice, off the GUI thread."""
        self._defaults_shown = True
        if not self._ctx.ledger_open:
            self._say_defaults("No ledger is open to say which routes those are.")
            return
        ledger = self._ctx.ledger

        def work() -> object:
            from core.ledger.alert_queries import load_alert_settings

            return load_alert_settings(ledger)

        self._defaults.submit(work)

    def _say_defaults(self, text: str) -> None:
        self.defaults_line.setText(text)
        self.defaults_line.setAccessibleDescription(text)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.defaults_line.isVisibleTo(self) and not self._defaults_shown:
            self.read_defaults()

    # --- reading ------------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's ``alerts`` (rows still being fixed stay while the document is unchanged)."""
        alerts = self._doc.value(KEY)
        held = self.problem.holds(alerts)
        choice = OWN if held else choice_of(alerts)
        if not held and rows_of(alerts) != [(t.strip(), k) for t, k in self._rows()]:
            self._show_rows(rows_of(alerts))
        self._show_choice(choice)
        self._show_problems()

    def _show_choice(self, choice: str) -> None:
        """``choice`` checked, with what goes under it: the rows, or the line naming the ledger's routes."""
        self.buttons[choice].setChecked(True)
        self.rows_box.setVisible(choice == OWN)
        self.defaults_line.setVisible(choice == DEFAULT)
        if choice != DEFAULT:
            self._defaults_shown = False
        elif not self._defaults_shown and self.isVisible():
            self.read_defaults()
        self.meaning.setText(next(m for c, _w, m in CHOICES if c == choice))

    def _rows(self) -> list[Row]:
        return [r.row() for r in self.route_rows]

    def _show_rows(self, rows: list[Row]) -> None:
        """Show ``rows`` in the rows there are (their names follow their places), adding or dropping the last."""
        syncing, self._syncing = self._syncing, True
        try:
            while len(self.route_rows) > len(rows):
                old = self.route_rows.pop()
                old.setParent(None)  # gone from the box at once (a screen reader, a test)
                old.deleteLater()
            while len(self.route_rows) < len(rows):
                self._append_row()
            for widget, row in zip(self.route_rows, rows, strict=True):
                widget.show_row(row)
        finally:
            self._syncing = syncing

    def _show_problems(self) -> None:
        own = self.problem.message
        spec = [f"{p.key}: {p.message}" for p in self._doc.problems if p.key.startswith(KEY)]
        show_problems(self.problem_line, [own] if own else spec)
        ready = not own and not spec and choice_of(self._doc.value(KEY)) == OWN
        self.test_button.setEnabled(ready)
        explain(self.test_button, TEST_TIP if ready else "Type the routes first: a test goes to each route shown")
