"""Text cut to the room it has at a word's end, never in the middle of one: :func:`whole_words`,
:class:`WholeWordsLabel`, a one-line label that shows its text that way, and
:class:`WholeWordsDelegate`, table cells that do (their whole text in their tooltip)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QHelpEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

_Index = QModelIndex | QPersistentModelIndex


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


class WholeWordsDelegate(QStyledItemDelegate):
    """Draws the cells of the columns whose header is one of ``headers`` (all columns without
    ``headers``) cut at a word's end with "…" when they do not fit, never mid-word; such a cell's
    tooltip starts with its whole text (then the model's own tooltip, if it has one)."""

    def __init__(self, parent: QObject | None = None, headers: tuple[str, ...] | None = None) -> None:
        super().__init__(parent)
        self._headers = headers

    def applies(self, index: _Index) -> bool:
        if self._headers is None:
            return True
        model = index.model()
        header = model.headerData(index.column(), Qt.Orientation.Horizontal) if model is not None else None
        return header in self._headers

    def initStyleOption(self, option: QStyleOptionViewItem, index: _Index) -> None:
        super().initStyleOption(option, index)
        if self.applies(index) and option.text:
            option.text = whole_words(option.text, self._room(option), option.fontMetrics.horizontalAdvance)

    @staticmethod
    def _room(option: QStyleOptionViewItem) -> int:
        widget = option.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return option.rect.width()
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        return rect.width() - 2 * margin

    def shown_text(self, view: QAbstractItemView, index: _Index) -> str:
        """What the cell at ``index`` shows now in ``view``: its whole text, or its first words and "…"."""
        option = QStyleOptionViewItem()
        option.initFrom(view.viewport())
        option.widget = view
        option.rect = view.visualRect(view.model().index(index.row(), index.column(), index.parent()))
        self.initStyleOption(option, index)
        return option.text

    def tooltip(self, view: QAbstractItemView, index: _Index) -> str | None:
        """The cell's tooltip: its whole text first when the cell shows less of it."""
        full = index.data(Qt.ItemDataRole.DisplayRole)
        own = index.data(Qt.ItemDataRole.ToolTipRole)
        if not self.applies(index) or not isinstance(full, str) or self.shown_text(view, index) == full:
            return own if isinstance(own, str) else None
        return f"{full}\n\n{own}" if isinstance(own, str) and own and own != full else full

    def helpEvent(
        self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem, index: _Index
    ) -> bool:
        if event.type() != QEvent.Type.ToolTip or not index.isValid():
            return super().helpEvent(event, view, option, index)
        tip = self.tooltip(view, index)
        if tip:
            QToolTip.showText(event.globalPos(), tip, view)
        else:
            QToolTip.hideText()
        return True
