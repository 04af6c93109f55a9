"""The designer page: the title and id, the summary sentence, the "When" form beside the clock
changes box, the foldable task and recovery sections, and below them the
preview, timeline and what-if tabs, all on one :class:`SpecDocument`.

The preview and the timeline share one :class:`PreviewService`, so an edit is
expanded once and both redraw from the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.designer.business_state import CALENDAR, heading_detail
from scheduler_gui.designer.trust import TrustStore
from scheduler_gui.optional import load
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.reflow import Reflow, widths
from scheduler_gui.tab_order import move_after, order_tabs
from scheduler_gui.workspace.document import SpecDocument

if TYPE_CHECKING:  # loaded when the panel is made (the first window appears sooner)
    from scheduler_gui.designer.identity_fields import IdentityFields

#: Tab keys, in order, with their titles and tooltips.
#: Below this height (the page's, in pixels) the title, id and summary scroll with the settings.
COMPACT_BELOW = 600

TABS = (
    ("preview", "Preview", "The next occurrences, with every clock change as a separator row"),
    ("timeline", "Timeline", "The occurrences on a time axis with the zone's offset periods"),
    ("whatif", "What-if", "What the misfire policy would do if the computer were off for a while"),
)


def _build(module: str, name: str, what: str, *args: Any) -> QWidget:
    widget: QWidget = load(f"scheduler_gui.{module}", name)(*args)
    return widget


def _scrolling(widget: QWidget, title: str) -> QScrollArea:
    """``widget`` filling a scroll area: a narrow window scrolls it sideways instead of clipping it."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab stop of its own: it scrolls to the field in focus
    accessible(area, title, f"The {title.lower()} tab; it scrolls when the window is too small for it")
    return area


class FoldSection(QWidget):
    """A heading button that shows or hides its content ("Task ▸" / "Task ▾").

    The content is built by ``build`` when the section is first opened: a closed
    section costs nothing at start-up.
    """

    toggled = Signal(bool)
    contentBuilt = Signal()
    """The content was just built (its fields join the window: the page puts them in Tab order)."""

    def __init__(self, title: str, detail: str, build: Callable[[], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._title = title
        self._detail = detail
        self._build = build
        self._content: QWidget | None = None
        self.button = QPushButton(self)
        self.button.setCheckable(True)
        self.button.setFlat(True)
        self.button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.button.setStyleSheet("QPushButton { text-align: left; font-weight: bold; padding: 4px 6px; }")
        self._name_button()
        self.button.toggled.connect(self.set_open)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.button)
        self.set_open(False)

    def _name_button(self) -> None:
        # The name holds the heading and the detail the folded button shows beside it.
        title, detail = self._title, self._detail
        accessible(
            self.button,
            f"{title} — {detail}" if detail else title,
            f"Show or hide {title.lower()}: {detail}" if detail else f"Show or hide {title.lower()}",
        )

    def set_detail(self, detail: str) -> None:
        """Say ``detail`` beside the folded heading (what the section holds now)."""
        if detail != self._detail:
            self._detail = detail
            self._name_button()
            self._show_heading()

    def _show_heading(self) -> None:
        arrow = "▾" if self.is_open else "▸"
        extra = f"   {self._detail}" if self._detail and not self.is_open else ""
        self.button.setText(f"{self._title} {arrow}{extra}")

    @property
    def content(self) -> QWidget:
        """The section's widget, built now if it was not yet."""
        if self._content is None:
            self._content = self._build()
            self._content.setVisible(self.is_open)
            layout = self.layout()
            assert layout is not None
            layout.addWidget(self._content)
            self.contentBuilt.emit()
        return self._content

    @property
    def built(self) -> bool:
        return self._content is not None

    @property
    def is_open(self) -> bool:
        return self.button.isChecked()

    def set_open(self, open_: bool) -> None:
        if self.button.isChecked() != open_:
            self.button.setChecked(open_)
            return
        self._show_heading()
        if open_ or self._content is not None:
            self.content.setVisible(open_)
        self.toggled.emit(open_)


class DesignerPanel(QWidget):
    """Everything about one schedule file: what it says, and what it will do."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("designerPanel")
        self.setAccessibleName("Schedule designer")
        self.document = document
        self.ctx = ctx
        self.service = PreviewService(document, ctx.clock, self)

        self.identity = cast(
            "IdentityFields",
            _build("designer.identity_fields", "IdentityFields", "The title and id", document, ctx, self),
        )
        # The summary and the consequences look from the preview's own instant (its From, or "now").
        self.summary = _build("designer.summary", "SummaryLine", "The summary", document, ctx, self, self.service)
        self.when_form = _build("designer.when_form", "WhenForm", "The schedule form", document, ctx, self)
        self.clock_changes = _build(
            "designer.clock_changes", "ClockChangesBox", "The clock-change policies", document, ctx, self, self.service
        )
        # Folded at first: the business days, the task editor and the recovery settings are built when opened.
        self.business_section = FoldSection(
            "Business days",
            heading_detail(document.data),
            lambda: _build(
                "designer.business_days", "BusinessDaysBox", "The business days", document, ctx, self, self.service
            ),
        )
        self.task_section = FoldSection(
            "Task",
            "command · folder · environment · timeout",
            lambda: _build("designer.task_editor", "TaskEditor", "The task editor", document, ctx, self),
        )
        self.recovery_section = FoldSection(
            "When things go wrong",
            "misfire · overlap · retry · jitter · alerts",
            lambda: _build("designer.recovery", "RecoveryPanel", "The recovery settings", document, ctx, self),
        )

        # The preview is built now; the timeline and the what-if view when first shown (they load more code).
        self.preview = _build("preview.panel", "PreviewPanel", "The preview table", self.service, ctx)
        self._ordered = False  # Tab order is set once the page is laid out (order_tabs); later tabs move then
        self.timeline: QWidget | None = None
        self.whatif: QWidget | None = None
        self._build_tabs()
        self._fill_tab(0)
        self.tabs.currentChanged.connect(self._fill_tab)
        self._build_settings()
        self._lay_out()
        self._ordered = True
        self.order_tabs()
        for section in self.sections:
            section.contentBuilt.connect(lambda section=section: self._place(section))
        document.changed.connect(self._business_changed)
        self._business_changed()
        self.service.refresh_now()

    @property
    def sections(self) -> tuple[FoldSection, ...]:
        """The folding sections, top to bottom."""
        return (self.business_section, self.task_section, self.recovery_section)

    def _business_changed(self) -> None:
        """The business days heading says what the calendar holds (a calendar without its policy is not
        valid: the core's validation holds Save back and names holidayPolicy)."""
        data = self.document.data
        self.business_section.set_detail(heading_detail(data))
        if data.get(CALENDAR) is not None and not self.business_section.built:
            self.business_section.set_open(True)  # a file with a calendar shows it

    # --- building -------------------------------------------------------------------
    def _build_tabs(self) -> None:
        """The Preview, Timeline and What-if tabs, each an empty holder its view goes into when first shown."""
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("designerTabs")
        accessible(
            self.tabs,
            "Preview, timeline and what-if",
            "What the schedule will do: its next occurrences, on a time axis, and after an outage",
        )
        accessible(
            self.tabs.tabBar(),
            "Preview, timeline and what-if tabs",
            "Choose the preview, the timeline or the what-if view",
        )
        self.tabs.setDocumentMode(True)
        self._tab_layouts: list[QVBoxLayout] = []  # each tab's, by index: its view goes in when first shown
        for key, title, tip in TABS:
            holder = QWidget()
            holder.setObjectName(f"{key}Holder")
            holder_layout = QVBoxLayout(holder)
            holder_layout.setContentsMargins(0, 0, 0, 0)
            self._tab_layouts.append(holder_layout)
            i = self.tabs.addTab(holder, title)
            self.tabs.setTabToolTip(i, tip)

    def _build_settings(self) -> None:
        """The forms in a scroll area: "When" beside "Clock changes", then the Task and recovery sections.
        They scroll when the window is short; the tabs keep the rest."""
        forms = QWidget()
        forms_layout = QVBoxLayout(forms)
        forms_layout.setContentsMargins(0, 0, 4, 0)
        self._forms_layout = forms_layout
        side = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        side.addWidget(self.when_form, 3)
        side.addWidget(self.clock_changes, 2)
        forms_layout.addLayout(side)
        forms_layout.addWidget(self.business_section)
        forms_layout.addWidget(self.task_section)
        forms_layout.addWidget(self.recovery_section)
        forms_layout.addStretch(1)
        self.settings_area = QScrollArea(self)
        self.settings_area.setWidget(forms)
        self.settings_area.setWidgetResizable(True)
        self.settings_area.setFrameShape(QFrame.Shape.NoFrame)
        self.settings_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # as the tabs' scroll areas
        accessible(
            self.settings_area, "Schedule settings", "When the schedule runs, its clock changes, task and recovery"
        )
        self.settings_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # "Clock changes" goes under "When" where the two do not fit side by side (a 1024 px window).
        self.side_by_side = Reflow(self.settings_area, side, widths(self.when_form, self.clock_changes))

    def _lay_out(self) -> None:
        """The title and id, the summary, then the settings over the tabs (half and half at first)."""
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("designerSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.settings_area)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 330])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(6)
        layout.addWidget(self.identity)  # UI.md: the title, with its id beneath, above the summary
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)
        self._page_layout = layout
        self.compact = False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """On a short page (a 640 px window) the title, id and summary scroll with the settings, so that
        the preview keeps its share of the height; on a taller one they stay above them."""
        compact = self.height() < COMPACT_BELOW
        if compact == self.compact:
            return
        self.compact = compact
        for i, widget in enumerate((self.identity, self.summary)):
            if compact:
                self._page_layout.removeWidget(widget)
                self._forms_layout.insertWidget(i, widget)
            else:
                self._forms_layout.removeWidget(widget)
                self._page_layout.insertWidget(i, widget)

    def _place(self, section: FoldSection) -> None:
        """A section's content, just built (it joined the end of Qt's order), is read after its heading;
        one that lays itself out by the room there is (the business days) is told where that room is."""
        move_after(section.button, section.content)
        reflow_in = getattr(section.content, "reflow_in", None)
        if callable(reflow_in):
            reflow_in(self.settings_area.viewport())

    def order_tabs(self) -> None:
        """Tab in reading order: the title and id, the "When" box top to bottom, the clock changes,
        the task and recovery sections, then the tabs and the view in front. (The scroll area of the
        forms is filled after the tabs are made, so Qt's own order would put the tabs first.)"""
        if self._ordered:
            order_tabs(self.identity, self.when_form, self.clock_changes, *self.sections, self.tabs)

    def _fill_tab(self, index: int) -> None:
        key, title, _tip = TABS[index]
        layout = self._tab_layouts[index]
        if layout.count():
            return
        if key == "preview":
            widget = self.preview
        elif key == "timeline":
            widget = self.timeline = _build("preview.timeline", "TimelineView", "The timeline", self.service, self.ctx)
        else:
            widget = self.whatif = _build("preview.whatif", "WhatIfView", "The what-if view", self.document, self.ctx)
        widget.setObjectName(f"{key}Tab")
        area = _scrolling(widget, title)
        layout.addWidget(area)
        if self._ordered:  # built late: read after the tab bar and the tabs built before
            move_after(self.tabs, area)

    def tab_widget(self, key: str) -> QWidget:
        """The view in tab ``key``, built now if it was not yet."""
        keys = [k for k, _t, _tip in TABS]
        self._fill_tab(keys.index(key))
        widget = {"preview": self.preview, "timeline": self.timeline, "whatif": self.whatif}[key]
        assert widget is not None
        return widget

    def show_tab(self, key: str) -> None:
        """Bring ``preview``, ``timeline`` or ``whatif`` to the front."""
        for i, (name, _title, _tip) in enumerate(TABS):
            if name == key:
                self.tabs.setCurrentIndex(i)
                return
        raise ValueError(f"no tab {key!r}")

    def current_tab(self) -> str:
        return TABS[self.tabs.currentIndex()][0]

    @property
    def business_days(self) -> QWidget:
        """The business days section (built on first use)."""
        return self.business_section.content

    @property
    def task_editor(self) -> QWidget:
        """The task editor (built on first use)."""
        return self.task_section.content

    @property
    def recovery(self) -> QWidget:
        """The misfire, overlap, retry and jitter settings (built on first use)."""
        return self.recovery_section.content

    def save_layout(self, settings: QSettings) -> None:
        """Remember the splitter, the tab in front and which sections are open."""
        settings.setValue("designer/splitter", self.splitter.saveState())
        settings.setValue("designer/tab", self.current_tab())
        settings.setValue("designer/businessOpen", self.business_section.is_open)
        settings.setValue("designer/taskOpen", self.task_section.is_open)
        settings.setValue("designer/recoveryOpen", self.recovery_section.is_open)

    def restore_layout(self, settings: QSettings) -> None:
        """Lay the page out as :meth:`save_layout` left it (the next file opens the way the last one was)."""
        state = settings.value("designer/splitter")
        if state is not None:
            self.splitter.restoreState(state)
        tab = settings.value("designer/tab")
        if tab in [key for key, _t, _tip in TABS]:
            self.show_tab(str(tab))
        for key, section in (
            ("designer/businessOpen", self.business_section),
            ("designer/taskOpen", self.task_section),
            ("designer/recoveryOpen", self.recovery_section),
        ):
            section.set_open(settings.value(key, False) in (True, "true"))
        if self.document.data.get(CALENDAR) is not None:
            self.business_section.set_open(True)  # the calendar is part of when it runs
        if TrustStore(self.ctx.settings).needs_trust(self.document):
            # What the file would run, and the button to trust it, are in there.
            self.task_section.set_open(True)

    def refresh(self) -> None:
        """Rebuild the preview now (F5)."""
        self.service.refresh_now()

    def shutdown(self) -> None:
        """Let a running preview finish before the panel goes away."""
        self.service.wait(5000)
