"""A field's choices as radio buttons, one per choice, each named for screen readers by its field."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtWidgets import QBoxLayout, QButtonGroup, QRadioButton, QWidget

from scheduler_gui.a11y import accessible


def choice_buttons(
    parent: QWidget,
    layout: QBoxLayout,
    field: str,
    choices: Iterable[tuple[str, str, str]],
    choose: Callable[[str], None],
) -> tuple[QButtonGroup, dict[str, QRadioButton]]:
    """One radio button per (choice, words, meaning) of ``choices``, added to ``layout`` in one group:
    named "``field``: words", described by its meaning, and calling ``choose(choice)`` when clicked."""
    group = QButtonGroup(parent)
    buttons: dict[str, QRadioButton] = {}
    for choice, words, meaning in choices:
        button = QRadioButton(words, parent)
        accessible(button, f"{field}: {words}", meaning)
        group.addButton(button)
        buttons[choice] = button
        layout.addWidget(button)
        button.clicked.connect(lambda _checked=False, choice=choice: choose(choice))
    return group, buttons
