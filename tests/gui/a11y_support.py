"""What a screen reader needs from every control, checked widget by widget.

:func:`a11y_problems` walks a window (or a dialog) and returns one line per
control that breaks a rule:

- it has an accessible name and an accessible description;
- the name matches what a sighted person reads: a button's (or check box's,
  radio button's) own text is in its name; a field's label ``L`` (the label
  whose buddy it is, else the label just before it in its row, else its row
  label in a form) is its name, or starts it (``L: how many``,
  ``L (minutes past the hour)``, ``L — …``, ``L and more words``);
- a label of controls (a row's label) is the buddy of one of them, so a
  screen reader ties the two together and a mnemonic (``&From``) reaches
  the row.

Qt's own parts of a composite widget are left out (:func:`internal_reason`
says why, case by case): a person reaches them through the widget they belong
to, which is checked.
"""

from __future__ import annotations

import re

from PySide6.QtCharts import QChartView
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QBoxLayout,
    QCalendarWidget,
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QScrollBar,
    QSlider,
    QTabBar,
    QTextEdit,
    QWidget,
)

#: The controls a person works with; any other widget counts when Tab can reach it.
CONTROLS = (
    QAbstractButton,
    QLineEdit,
    QComboBox,
    QAbstractSpinBox,
    QAbstractItemView,
    QPlainTextEdit,
    QTextEdit,
    QSlider,
    QTabBar,
    QChartView,
)

#: Qt's own widgets, by the object names Qt gives them, and why they are left out.
QT_INTERNALS = {
    "qt_tableview_cornerbutton": "a table's select-all corner; the table itself is named",
    "qt_toolbar_ext_button": "the toolbar's overflow arrow, shown only when its buttons do not fit",
    "qt_menubar_ext_button": "the menu bar's overflow arrow, shown only when its menus do not fit",
    "qt_scrollarea_viewport": "a scroll area's viewport; the area (or the view) is named",
}

#: Marks drawn on buttons that a screen reader need not say (fold arrows, the "jump" arrow, a clear ×).
_GLYPHS = "▸▾⤓×"
#: What may follow a label at the start of a field's name.
_AFTER_LABEL = (":", " (", " —", " ")
_HORIZONTAL = (QBoxLayout.Direction.LeftToRight, QBoxLayout.Direction.RightToLeft)


def internal_reason(widget: QWidget) -> str | None:
    """Why ``widget`` is one of Qt's own parts and not checked, or None when it is checked."""
    name = widget.objectName()
    if name in QT_INTERNALS:
        return QT_INTERNALS[name]
    parent = widget.parentWidget()
    if isinstance(widget, QHeaderView):
        return "a view's header: its sections are read as the view's column names"
    if isinstance(widget, QScrollBar):
        return "a scroll bar: it never takes the focus"
    if isinstance(widget, QLineEdit) and _inside(widget, (QComboBox, QAbstractSpinBox)):
        return "the text part of a combo box, spin box or date field, named through its owner"
    if isinstance(widget, QAbstractButton) and isinstance(parent, QLineEdit):
        return "a line edit's clear button, which never takes the focus (Esc or Delete do the same)"
    if isinstance(parent, QTabBar):
        return "a tab bar's scroll arrow"
    if _inside(widget, (QCalendarWidget,)):
        return "the calendar popup of a date field"
    if isinstance(widget, QAbstractItemView) and (
        _inside(widget, (QComboBox,)) or widget.window().windowFlags() & Qt.WindowType.Popup == Qt.WindowType.Popup
    ):
        return "the list a combo box or a completer pops up; its items are the owner's choices"
    return None


def _inside(widget: QWidget, kinds: tuple[type, ...]) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parentWidget()
    return False


def is_control(widget: QWidget) -> bool:
    """A widget a person operates: one of :data:`CONTROLS`, or any other that Tab reaches itself
    (a widget whose focus goes to a proxy is reached through the proxy, which is checked)."""
    if isinstance(widget, CONTROLS):
        return True
    tabbed = bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
    return tabbed and widget.focusProxy() is None and not widget.isWindow()


def clean_label(text: str) -> str:
    """A label's words as read: no ``&`` mnemonic, no trailing colon."""
    text = re.sub(r"&(.)", r"\1", text).strip()
    return text.rstrip(":").strip()


def button_words(text: str) -> list[str]:
    """The parts of a button's text its name must hold: without ``&``, the arrows (which also
    separate parts: "Task ▸ command · folder"), a leading ``+ `` or a trailing ``…``."""
    text = re.sub(r"&(.)", r"\1", text)
    parts = []
    for part in re.split(f"[{_GLYPHS}]", text):
        part = " ".join(part.split()).removeprefix("+ ").removesuffix("…").removesuffix("...").strip()
        if part:
            parts.append(part)
    return parts


def _label_text(widget: QWidget | None) -> str | None:
    if not isinstance(widget, QLabel) or widget.textFormat() == Qt.TextFormat.RichText:
        return None
    return clean_label(widget.text()) or None


def _layout_holding(layout: QLayout, widget: QWidget) -> tuple[QLayout, int] | None:
    """The layout (``layout`` or one within it) that holds ``widget`` directly, and its index there."""
    for i in range(layout.count()):
        item = layout.itemAt(i)
        if item is None:
            continue
        if item.widget() is widget:
            return layout, i
        inner = item.layout()
        if inner is not None:
            found = _layout_holding(inner, widget)
            if found is not None:
                return found
    return None


def _label_before(widget: QWidget) -> QLabel | None:
    """The label right before ``widget`` in its row (a horizontal box). A label that takes the row's
    free room (a stretch factor) is a line of text beside the widget, not its label."""
    parent = widget.parentWidget()
    top = parent.layout() if parent is not None else None
    found = _layout_holding(top, widget) if top is not None else None
    if found is None:
        return None
    layout, index = found
    if not isinstance(layout, QBoxLayout) or layout.direction() not in _HORIZONTAL or index == 0:
        return None
    before = layout.itemAt(index - 1)
    label = before.widget() if before is not None else None
    if not isinstance(label, QLabel) or _label_text(label) is None or layout.stretch(index - 1) > 0:
        return None
    return label


def _layout_widgets(layout: QLayout) -> list[QWidget]:
    """The widgets ``layout`` and the layouts within it hold directly."""
    found = []
    for i in range(layout.count()):
        item = layout.itemAt(i)
        if item is None:
            continue
        if item.widget() is not None:
            found.append(item.widget())
        elif item.layout() is not None:
            found.extend(_layout_widgets(item.layout()))
    return found


def form_labels(root: QWidget) -> dict[int, QLabel]:
    """Each form row's field widgets (the field, or the widgets of a field layout) → the row's label."""
    labels: dict[int, QLabel] = {}
    for form in root.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            label = label_item.widget() if label_item is not None else None
            if field is None or not isinstance(label, QLabel) or _label_text(label) is None:
                continue
            held = [field.widget()] if field.widget() is not None else _layout_widgets(field.layout())
            for widget in held:
                labels[id(widget)] = label
    return labels


def _form_label(widget: QWidget, labels: dict[int, QLabel]) -> QLabel | None:
    """The label of the form row ``widget`` is in: as the field itself, or a few plain containers
    down (a field with its messages under it, a row of parts)."""
    child: QWidget | None = widget
    for _ in range(4):
        if child is None:
            return None
        if id(child) in labels:
            return labels[id(child)]
        child = child.parentWidget()
    return None


def focus_target(widget: QWidget) -> QWidget:
    """Where focus given to ``widget`` lands (its focus proxy, followed to the end)."""
    while widget.focusProxy() is not None:
        widget = widget.focusProxy()
    return widget


def label_of(
    widget: QWidget, buddies: dict[int, QLabel], forms: dict[int, QLabel], *, own_words: bool = False
) -> QLabel | None:
    """The label a sighted person reads for ``widget``, or None when it has none. A button with
    ``own_words`` is labelled only by a buddy or its form row: text just before it is not its label."""
    before = None if own_words else _label_before(widget)
    return buddies.get(id(widget)) or before or _form_label(widget, forms)


def names_label(name: str, label: str) -> bool:
    """``name`` is ``label``, or begins with it and goes on (``At (minutes past the hour)``)."""
    name, label = name.casefold(), label.casefold()
    return name == label or any(name.startswith(label + after) for after in _AFTER_LABEL)


def controls(root: QWidget) -> list[QWidget]:
    """The controls under ``root`` (and ``root`` itself) that the rules apply to, hidden ones included."""
    widgets = [root, *root.findChildren(QWidget)]
    return [w for w in widgets if is_control(w) and internal_reason(w) is None]


def a11y_problems(root: QWidget) -> list[str]:
    """One line per control under ``root`` (and ``root`` itself) that a screen reader cannot use
    as it should, and per label that is not the buddy of a control in its row."""
    widgets = [root, *root.findChildren(QWidget)]
    buddies: dict[int, QLabel] = {}
    for label in widgets:
        buddy = label.buddy() if isinstance(label, QLabel) else None
        if buddy is not None and _label_text(label) is not None:
            buddies[id(buddy)] = label
            buddies[id(focus_target(buddy))] = label
    forms = form_labels(root)
    labelled: dict[int, tuple[QLabel, list[QWidget]]] = {}
    problems = []
    for widget in controls(root):
        name, description = widget.accessibleName(), widget.accessibleDescription()
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        words = button_words(text)
        label = label_of(widget, buddies, forms, own_words=bool(words))
        label_text = _label_text(label) if label is not None else None
        missing = []
        if not name.strip():
            missing.append("no name")
        if not description.strip():
            missing.append("no description")
        if words and not all(part.casefold() in name.casefold() for part in words):
            missing.append(f"name lacks its text {text!r}")
        if label is not None and label_text is not None:
            labelled.setdefault(id(label), (label, []))[1].append(widget)
            # A button's own words name it; a field's name is its label's.
            if not words and not names_label(name, label_text):
                missing.append(f"name is not its label {label_text!r}")
        if missing:
            problems.append(
                f"{type(widget).__name__} {widget.objectName()!r} name={name!r} label={label_text or text!r}: "
                + "; ".join(missing)
            )
    for label, fields in labelled.values():
        buddy = label.buddy()
        if buddy is None or not any(focus_target(buddy) is focus_target(f) for f in fields):
            problems.append(
                f"QLabel {label.text()!r}: not the buddy of a control in its row ({fields[0].accessibleName()!r})"
            )
    return problems


def labelled(root: QWidget, label: str) -> QWidget:
    """The one control under ``root`` whose label (as :func:`label_of` finds it) reads ``label``:
    how a sighted person finds a field, whatever its accessible name."""
    widgets = [root, *root.findChildren(QWidget)]
    buddies = {id(w.buddy()): w for w in widgets if isinstance(w, QLabel) and w.buddy() is not None}
    forms = form_labels(root)
    found = [
        w
        for w in controls(root)
        if not button_words(w.text() if isinstance(w, QAbstractButton) else "")
        and (lab := label_of(w, buddies, forms)) is not None
        and _label_text(lab) == label
    ]
    assert len(found) == 1, f"{len(found)} controls labelled {label!r}"
    return found[0]


def heading(root: QWidget, words: str) -> QAbstractButton:
    """The one button under ``root`` whose text starts with ``words`` (a fold heading "Task ▸ …")."""
    found = [b for b in root.findChildren(QAbstractButton) if re.sub(r"&(.)", r"\1", b.text()).startswith(words)]
    assert len(found) == 1, f"{len(found)} buttons reading {words!r}"
    return found[0]
