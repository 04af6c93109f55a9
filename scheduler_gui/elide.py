"""Text cut to the room it has at a word's end, never in the middle of one: :func:`whole_words`,
and :class:`WholeWordsLabel`, a one-line label that shows its text that way."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget


def whole_words(text: str, room: int, advance: Callable[[str], int]) -> str:
    """``text`` if it fits in ``room`` pixels, else as many of its first words as fit with "…" after
    them (never a word cut in two): "Next inbox-sync: Wed 2027-03-03…"."""
    if advance(text) <= room:
        return text
    words = text.split(" ")
    for end in range(len(words) - 1, 0, -1):
        shown = " ".join(words[:end]).rstrip(" ·:") + "…"
        if advance(shown) <= room:
            return shown
    return words[0] + "…"


class WholeWordsLabel(QLabel):
    """A one-line label that asks for its whole text's width and gives up room down to its first
    word: in less room it shows the words that fit and "…" (whole words only), and shows more again
    when it grows. :meth:`text` is always the whole text; :meth:`shown_text` is what is drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""

    def setText(self, text: str) -> None:
        self._full = text
        self._fit()
        self.updateGeometry()

    def text(self) -> str:
        """The whole text, also while fewer words are shown."""
        return self._full

    def shown_text(self) -> str:
        """What the label shows now: the whole text, or its first words and "…"."""
        return super().text()

    def _width(self, text: str) -> int:
        margins = self.contentsMargins()
        return self.fontMetrics().horizontalAdvance(text) + margins.left() + margins.right() + 2

    def sizeHint(self) -> QSize:
        return QSize(self._width(self._full), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        first = self._full.split(" ", 1)[0]
        return QSize(self._width(f"{first}…" if first != self._full else first), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        room = self.contentsRect().width() - 2
        shown = whole_words(self._full, room, self.fontMetrics().horizontalAdvance)
        if shown != super().text():
            super().setText(shown)
