"""Tab in reading order, across parts of a page built at different times.

Qt's Tab order is the order in which widgets joined the window. A page whose
parts join it out of reading order (a scroll area filled after the tabs
below it were made), or later than the rest (a folded section opened, a tab
first shown: its fields join at the window's end), is put right with
:func:`order_tabs` (the parts one after the other) and :func:`move_after`
(a part built late, after its heading). Each part keeps its own order inside.

A part is moved whole by making it, for the moment of the move, what Qt calls
a compound widget (it takes Tab focus and hands it to its first stop):
``QWidget.setTabOrder`` then moves it with everything inside it. Moving its
controls one by one instead would leave behind the containers that hand
their focus to a control (a date field, the zone picker), and Tab reaching
such a container jumps back to its control.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


def first_stop(part: QWidget) -> QWidget | None:
    """The first widget inside ``part`` (itself included) that Tab stops at, in the window's focus
    order, or None. Hidden ones count: they keep their place when shown."""
    widget = part
    while True:
        inside = widget is part or part.isAncestorOf(widget)
        if inside and widget.focusPolicy() & Qt.FocusPolicy.TabFocus and widget.focusProxy() is None:
            return widget
        following = widget.nextInFocusChain()
        if following is None or following is part:
            return None
        widget = following


@contextmanager
def _as_block(part: QWidget) -> Iterator[None]:
    """While inside, ``part`` is what Qt calls a compound widget (it takes Tab focus and hands it to
    its first stop), so that :meth:`QWidget.setTabOrder` moves it with everything inside it and keeps
    their order. Its own focus policy and proxy are put back afterwards."""
    policy, proxy = part.focusPolicy(), part.focusProxy()
    stop = first_stop(part)
    if proxy is None and stop is not None and stop is not part:
        part.setFocusProxy(stop)
    part.setFocusPolicy(policy | Qt.FocusPolicy.TabFocus)
    try:
        yield
    finally:
        # Qt takes None (no proxy), which the stubs leave out.
        part.setFocusProxy(proxy)  # type: ignore[arg-type]
        part.setFocusPolicy(policy)


def move_after(anchor: QWidget, part: QWidget) -> None:
    """Tab goes from ``anchor`` (and all inside it) into ``part``, whose own order is kept: for a part
    built late (a folded section opened), which Qt puts at the end of the window's order."""
    if first_stop(part) is None:
        return
    with _as_block(part):
        QWidget.setTabOrder(anchor, part)


def order_tabs(*parts: QWidget) -> None:
    """Make Tab go through ``parts`` one after the other, each keeping its own order inside."""
    parts = tuple(part for part in parts if first_stop(part) is not None)
    for before, after in pairwise(parts):
        with _as_block(before):
            move_after(before, after)
