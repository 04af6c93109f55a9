"""Laying widgets out for the room there is: side by side while they fit, one
under the other when the window is narrow (down to 1024 px wide).

:class:`Reflow` watches a host widget's width and turns a :class:`QBoxLayout`
between left-to-right and top-to-bottom. What the items need side by side is
asked of them (their size hints), so a longer translation or a bigger font
moves the point by itself.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QBoxLayout, QWidget

Direction = QBoxLayout.Direction


class Reflow(QObject):
    """Lays ``box`` left to right while ``host`` is at least ``needed()`` wide, else top to bottom."""

    def __init__(
        self,
        host: QWidget,
        box: QBoxLayout,
        needed: Callable[[], int],
        turned: Callable[[bool], None] | None = None,
    ) -> None:
        """``turned(stacked)`` is called whenever the direction changes."""
        super().__init__(host)
        self._host = host
        self._box = box
        self._needed = needed
        self._turned = turned
        host.installEventFilter(self)

    @property
    def stacked(self) -> bool:
        """True while the items are one under the other."""
        return self._box.direction() is Direction.TopToBottom

    def apply(self) -> None:
        wanted = Direction.LeftToRight if self._host.width() >= self._needed() else Direction.TopToBottom
        if self._box.direction() is not wanted:
            self._box.setDirection(wanted)
            if self._turned is not None:
                self._turned(self.stacked)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self.apply()
        return False


def widths(*items: QWidget | QBoxLayout, spacing: int = 12) -> Callable[[], int]:
    """What ``items`` need side by side: the sum of their preferred widths and the gaps between them."""

    def needed() -> int:
        return sum(item.sizeHint().width() for item in items) + spacing * (len(items) - 1)

    return needed
