"""The main window: menus, toolbar, the sidebar, the designer and monitor pages,
the status bar and remembered geometry; files come from :mod:`scheduler_gui.workspace.files`.

One :class:`SpecDocument` per open file: opening another file builds a new
document and a new designer page for it, so no view ever shows one file's
widgets over another file's data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QFileSystemWatcher, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.time.zones import tzdb_version
from scheduler_gui import version
from scheduler_gui.actions import (
    add_tool_action,
    build_actions,
    build_menus,
    build_toolbar,
    keys_text,
    refresh_icons,
)
from scheduler_gui.context import AppContext
from scheduler_gui.designer.panel import DesignerPanel
from scheduler_gui.desktop.install import follow_session_start
from scheduler_gui.icons import app_icon
from scheduler_gui.message_bar import MessageBar
from scheduler_gui.monitor import hide_to_tray
from scheduler_gui.monitor.hub import MonitorHub
from scheduler_gui.monitor.states import EngineState, HubState, ShutdownMode
from scheduler_gui.monitor.tray import AttentionTray, tray_available
from scheduler_gui.optional import load, placeholder
from scheduler_gui.rights_gate import RightsBanner, refusal, show_engine_refusal, with_rights
from scheduler_gui.status_bar import StatusLine
from scheduler_gui.workspace.autosave import Autosaver
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.files import FilesMixin
from scheduler_gui.workspace.first_run_card import FirstRunCard
from scheduler_gui.workspace.folder import list_specs
from scheduler_gui.workspace.recent import RecentFiles
from scheduler_gui.workspace.schedule_names import check_id
from scheduler_gui.workspace.sidebar import Sidebar, schedule_rows
from scheduler_gui.workspace.zone import WorkspaceZone, ZoneBanner, ZoneStatus

DEFAULT_SIZE = (1280, 800)
MONITOR_PAGES = ("occurrences", "attention", "health", "schedules", "engines")


class MainWindow(FilesMixin, QMainWindow):
    """The Tidemark window. Build it with an :class:`AppContext`; call :meth:`start_monitor` once shown.
    ``tray_available`` says whether the desktop has a system tray (tests pass their own)."""

    closed = Signal()
    """The window closed for good (not hidden in the tray): the app ends."""
    #: True while File ▸ Quit (or the tray's Quit) closes the window: it must not hide.
    quitting = False

    def __init__(
        self, ctx: AppContext, parent: QWidget | None = None, *, tray_available: Callable[[], bool] = tray_available
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setObjectName("mainWindow")
        self.setWindowIcon(app_icon())
        self.recent = RecentFiles(ctx.settings)
        self.autosaver = Autosaver(ctx.settings, self)
        self.hub = MonitorHub(ctx, self)
        self.tray = self._make_tray(tray_available)
        self.document: SpecDocument | None = None
        self.designer: DesignerPanel | None = None
        self._doc_links: list[tuple[Any, Callable[..., Any]]] = []
        self._pages: dict[str, QWidget] = {}
        self._blocked_tip: str | None = None

        self.acts = build_actions(self)
        self.recent_menu = QMenu("Open &Recent", self)
        self.recent_menu.setToolTipsVisible(True)
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        build_menus(self, self.acts, self.recent_menu)
        self.toolbar = build_toolbar(self, self.acts)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.toolbar.addWidget(spacer)
        add_tool_action(self.toolbar, self.acts.engine_toggle)

        self.sidebar = Sidebar(self)
        self.first_run_card = self.sidebar.add_card(FirstRunCard(ctx.settings, self.sidebar))
        self.stack = QStackedWidget(self)
        self.stack.setAccessibleName("Current view")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.stack)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([290, DEFAULT_SIZE[0] - 290])
        self.rights_banner = RightsBanner(self)
        # Above the views, until a person confirms it: the zone new schedules start in.
        self.workspace_zone = WorkspaceZone(ctx, self)
        self.zone_banner = ZoneBanner(self.workspace_zone, ctx.clock)
        central = QWidget(self)
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.rights_banner)
        column.addWidget(self.zone_banner)
        column.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self._designer_slot = placeholder("No schedule open.")
        self.stack.addWidget(self._designer_slot)

        self._build_status_bar()

        self._connect_actions()
        self._connect_hub()
        self.sidebar.scheduleActivated.connect(self._on_schedule_activated)
        self.sidebar.monitorActivated.connect(self.show_view)
        self.sidebar.newFromTemplateRequested.connect(self.new_from_template)

        self._fs_watch = QFileSystemWatcher(self)
        if ctx.workspace.is_dir():
            self._fs_watch.addPath(str(ctx.workspace))
        self._fs_watch.directoryChanged.connect(self._on_workspace_changed)

        self._restore_geometry()
        self.refresh_sidebar()
        self._update_engine()
        self._update_counts()

    def _build_status_bar(self) -> None:
        """The message bar and its permanent items (engine, next due, ledger, tzdata, counts, zone)."""
        self.messages = MessageBar(self)
        self.setStatusBar(self.messages)
        self.messages.take_status_tips(self)
        self.status = StatusLine(self, self.toolbar)
        # The toolbar says both: while a message shows, they give it their room.
        self.messages.step_aside(self.status.engine_status, self.status.next_label)
        self.engine_label = self.status.engine_label
        self.engine_status = self.status.engine_status
        self.next_label = self.status.next_label
        self.ledger_label = self.status.ledger_label
        self.tzdata_label = self.status.tzdata_label
        self.counts_label = self.status.counts_label
        self.zone_status = ZoneStatus(self.workspace_zone)
        self.zone_status.clicked.connect(self.zone_banner.choose_another)
        self.statusBar().addPermanentWidget(self.zone_status)

    def _make_tray(self, available: Callable[[], bool]) -> AttentionTray:
        """The tray icon (Open, Quit, what needs a person); where there is no tray it shows nothing."""
        tray = AttentionTray(self.ctx, self, available=available)
        tray.openRequested.connect(lambda: hide_to_tray.show_again(self))
        tray.quitRequested.connect(self.quit)
        return tray

    def _on_schedule_activated(self, path: str) -> None:
        self.open_path(Path(path))

    def _on_workspace_changed(self, _path: str) -> None:
        self.refresh_sidebar()

    # --- wiring --------------------------------------------------------------
    def _connect_actions(self) -> None:
        from scheduler_gui.actions import DisabledKeys

        a = self.acts
        a.new.triggered.connect(lambda: self.new_document())
        a.new_from_template.triggered.connect(lambda: self.new_from_template())
        a.open.triggered.connect(lambda: self.open_dialog())
        a.import_schedules.triggered.connect(lambda: self.import_schedules())
        a.save.triggered.connect(lambda: self.save())
        a.save_as.triggered.connect(lambda: self.save_as())
        a.quit.triggered.connect(self.quit)
        a.undo.triggered.connect(self._undo)
        a.redo.triggered.connect(self._redo)
        a.refresh.triggered.connect(self.refresh)
        a.filter.triggered.connect(self.focus_filter)
        a.view_designer.triggered.connect(lambda: self.show_view("designer"))
        a.view_occurrences.triggered.connect(lambda: self.show_view("occurrences"))
        a.view_attention.triggered.connect(lambda: self.show_view("attention"))
        a.view_health.triggered.connect(lambda: self.show_view("health"))
        a.view_schedules.triggered.connect(lambda: self.show_view("schedules"))
        a.view_engines.triggered.connect(lambda: self.show_view("engines"))
        a.publish.triggered.connect(self.publish)
        a.pause_schedule.triggered.connect(lambda: self._schedule_action("pause"))
        a.resume_schedule.triggered.connect(lambda: self._schedule_action("resume"))
        a.disable_schedule.triggered.connect(lambda: self._schedule_action("disable"))
        a.run_now.triggered.connect(lambda: self._schedule_action("run_now"))
        a.backfill.triggered.connect(lambda: self._schedule_action("backfill"))
        a.engine_toggle.triggered.connect(self.hub.toggle_engine)
        a.engine_autostart.setChecked(self.engine_autostart)
        a.engine_autostart.toggled.connect(lambda on: self.ctx.settings.setValue("engine/autostart", bool(on)))
        a.engine_settings.triggered.connect(self.engine_settings)
        a.about.triggered.connect(self.about)
        a.add_to_menu.triggered.connect(self.add_to_applications_menu)
        follow_session_start(a.session_start, lambda text: self.say(text, 10000))
        for act in (a.undo, a.redo, a.save, a.save_as, a.publish):
            act.setEnabled(False)
        # The schedule actions follow the open document's schedule in the ledger: a new
        # document becomes the current page, the ledger opens or fails, a summary changes.
        self._gated_doc: SpecDocument | None = None
        self.hub.summariesChanged.connect(lambda _s: self._update_schedule_actions())
        self.hub.ledgerReady.connect(self._update_schedule_actions)
        self.hub.ledgerFailed.connect(lambda _m: self._update_schedule_actions())
        self.stack.currentChanged.connect(lambda _i: self._update_schedule_actions())
        self._disabled_keys = DisabledKeys(
            self,
            [a.run_now, a.pause_schedule, a.resume_schedule, a.disable_schedule, a.backfill, a.engine_toggle],
            lambda text: self.say(text, 8000),
        )
        self._update_schedule_actions()

    def _update_schedule_actions(self) -> None:
        """Enable Run Now, Pause/Resume, Disable and Backfill only for a schedule published in
        the open ledger, following its state; otherwise say why in their tooltips."""
        from scheduler_gui.actions import apply_schedule_gate, schedule_gate

        doc = self.document
        if doc is not self._gated_doc:  # an id typed into a new document changes what they act on
            self._gated_doc = doc
            if doc is not None:
                doc.changed.connect(self._update_schedule_actions)
        sid = str(doc.value("scheduleId") or "") if doc is not None else ""
        if self.hub.state is HubState.OPEN:
            problem = None
        elif self.hub.state is HubState.FAILED:
            problem = f"The ledger cannot be used: {self.hub.error}"
        else:
            problem = "The ledger is still opening"
        summary = next((s for s in self.hub.summaries if s.schedule_id == sid), None)
        state = summary.state.value if summary is not None else None
        gate = with_rights(schedule_gate(sid or None, state, problem), self.ctx.rights)
        apply_schedule_gate(self.acts, gate, self.toolbar)

    def _connect_hub(self) -> None:
        self.hub.ledgerReady.connect(self._on_ledger_ready)
        self.hub.ledgerFailed.connect(self._on_ledger_failed)
        self.hub.summariesChanged.connect(self._on_summaries)
        self.hub.attentionChanged.connect(self._on_attention)
        self.hub.engineStateChanged.connect(self._on_engine_state)
        self.hub.message.connect(self._on_hub_message)
        self.hub.rightsChanged.connect(self._on_rights)

    @property
    def engine_autostart(self) -> bool:
        value = self.ctx.settings.value("engine/autostart", True)
        return value not in (False, "false", "0", 0)

    def start_monitor(self, *, seed: bool = False, start_engine: bool = False) -> None:
        """Open the ledger off the GUI thread; the monitor views appear once it answers."""
        self.hub.open(seed=seed, start_engine=start_engine)

    def _on_ledger_ready(self) -> None:
        ledger = self.ctx.ledger
        self.tray.follow(self.hub.watcher)
        self.status.show_ledger(ledger.where)
        self.rights_banner.show_rights(self.ctx.rights)
        self._rebuild_monitor_pages()
        self._update_engine()
        self._update_publish()

    def _on_rights(self) -> None:
        """A grant changed since the ledger opened: the banner, the actions and the views follow."""
        self.rights_banner.show_rights(self.ctx.rights)
        self._rebuild_monitor_pages()  # the attention cards' buttons follow the rights they were made with
        self._update_schedule_actions()
        self._update_publish()
        self._update_engine()
        self.refresh_sidebar()

    def _on_ledger_failed(self, message: str) -> None:
        self.status.show_ledger_failed(message)
        self.say(message)
        self._rebuild_monitor_pages()
        self._update_engine()

    def _rebuild_monitor_pages(self) -> None:
        for key in list(self._pages):
            page = self._pages.pop(key)
            was_current = self.stack.currentWidget() is page
            self.stack.removeWidget(page)
            page.deleteLater()
            if was_current:
                self.show_view(key)

    def _on_summaries(self, _summaries: list[Any]) -> None:
        self.refresh_sidebar()
        self._update_counts()

    def _on_hub_message(self, text: str) -> None:
        self.say(text, 15_000)

    def _on_engine_state(self, _state: str) -> None:
        self._update_engine()

    def _on_attention(self, count: int) -> None:
        self.sidebar.monitor.set_attention(count)
        self._update_counts()

    # --- views ---------------------------------------------------------------
    def current_view(self) -> str:
        if self.stack.currentWidget() is self._designer_slot or self.stack.currentWidget() is self.designer:
            return "designer"
        for key, page in self._pages.items():
            if page is self.stack.currentWidget():
                return key
        return "designer"

    def page(self, key: str) -> QWidget:
        """The monitor page ``key``, built on first use (its modules load only then)."""
        if key not in self._pages:
            if self.hub.state in (HubState.CLOSED, HubState.OPENING):
                page: QWidget = placeholder("Opening the ledger…")
            else:
                page = self.hub.make_view(key)
            page.setObjectName(f"{key}Page")
            self._pages[key] = page
            self.stack.addWidget(page)
            selected = getattr(page, "scheduleSelected", None)
            if selected is not None:
                selected.connect(self.show_schedule_occurrences)
        return self._pages[key]

    def show_view(self, key: str) -> None:
        """Show a view: ``designer``, ``preview``, ``timeline`` or ``whatif`` (the designer with that tab), or a
        monitor page: ``occurrences`` (also ``monitor``), ``attention``, ``health``, ``schedules``, ``engines``."""
        if key == "monitor":
            key = "occurrences"
        if key in ("designer", "preview", "timeline", "whatif"):
            self.stack.setCurrentWidget(self.designer or self._designer_slot)
            if self.designer is not None and key != "designer":
                self.designer.show_tab(key)
            self.sidebar.select_path(self.document.path if self.document else None)
            key = "designer"
        elif key in MONITOR_PAGES:
            self.stack.setCurrentWidget(self.page(key))
            self.sidebar.select_monitor(key)
        else:
            raise ValueError(f"no view {key!r}")
        for name, act in (
            ("designer", self.acts.view_designer),
            ("occurrences", self.acts.view_occurrences),
            ("attention", self.acts.view_attention),
            ("health", self.acts.view_health),
            ("schedules", self.acts.view_schedules),
            ("engines", self.acts.view_engines),
        ):
            act.setChecked(name == key)

    def focus_zone(self) -> None:
        """The open schedule's zone picker, its text selected to type another."""
        self.show_view("designer")
        picker: Any = getattr(self.designer.when_form, "zone", None) if self.designer is not None else None
        if picker is not None:
            picker.setFocus()
            picker.edit.selectAll()

    def show_schedule_occurrences(self, schedule_id: str) -> None:
        """The occurrences of one schedule (from the Schedules page)."""
        self._in_occurrences("set_schedule", schedule_id)

    def show_occurrence(self, occurrence_id: str) -> None:
        """The occurrences view showing one occurrence, selected, with its detail (attempts, history)."""
        self._in_occurrences("show_only", occurrence_id)

    def _in_occurrences(self, method: str, argument: str) -> None:
        """Show the occurrences view and call its ``method`` (absent while the page is a placeholder)."""
        self.show_view("occurrences")
        view = getattr(self._pages["occurrences"], "view", None)
        call = getattr(view, method, None)
        if callable(call):
            call(argument)

    def focus_filter(self) -> None:
        """Ctrl+F: the occurrences view's filter."""
        self.show_view("occurrences")
        page = self._pages["occurrences"]
        view = getattr(page, "view", page)
        focus = getattr(view, "focus_filter", None)
        if callable(focus):
            focus()

    def refresh(self) -> None:
        """F5: the workspace list and zone, the preview and the ledger views again."""
        self.workspace_zone.reload()
        self.refresh_sidebar()
        if self.designer is not None:
            self.designer.refresh()
        if self.hub.state is HubState.FAILED:
            self.status.show_opening()
            self.hub.retry()
        self.hub.refresh_summaries()
        self.hub.refresh_rights()
        for page in self._pages.values():
            for target in (page, getattr(page, "view", None), getattr(page, "detail", None)):
                refresh = getattr(target, "refresh", None)
                if callable(refresh):
                    refresh()

    def refresh_sidebar(self) -> None:
        summaries = {s.schedule_id: s for s in self.hub.summaries}
        rows = schedule_rows(list_specs(self.ctx.workspace), summaries, refusal(self.ctx.rights, "publish"))
        self.sidebar.set_rows(rows, self.document.path if self.document and self.current_view() == "designer" else None)

    # --- status --------------------------------------------------------------
    def _update_engine(self) -> None:
        self.status.show_engine(self.hub, self.acts.engine_toggle)
        show_engine_refusal(self.acts, self.hub.engine_refusal)

    def _update_counts(self) -> None:
        self.status.show_counts(self.hub)
        self._update_engine()

    def _update_title(self) -> None:
        doc = self.document
        name = doc.display_name if doc is not None else "no schedule"
        dirty = doc is not None and doc.dirty
        self.setWindowTitle(f"Tidemark — {name}{' ●' if dirty else ''}")

    def _update_save(self) -> None:
        """Save and Publish follow the document: enabled only when it can be saved, and the reason
        shown is always the current first problem (a field's unreadable text, else the spec's)."""
        doc = self.document
        ok = doc is not None and doc.can_save
        self.acts.save.setEnabled(ok)
        self.acts.save_as.setEnabled(ok)
        problem = doc.blocking() if doc is not None else None
        if problem is not None:
            tip = f"Cannot save while the schedule has a problem: {problem}"
            self.say(tip)
            self._blocked_tip = tip
        else:
            tip = "Save the schedule (Ctrl+S)"
            if self._blocked_tip is not None and self.messages.currentMessage() == self._blocked_tip:
                self.messages.clearMessage()
            self._blocked_tip = None
        self.acts.save.setToolTip(tip)
        self.acts.save_as.setToolTip(tip if not ok else "Save the schedule to another file (Ctrl+Shift+S)")
        self._update_publish()

    def _update_publish(self) -> None:
        doc = self.document
        refused = refusal(self.ctx.rights, "publish")
        ok = doc is not None and doc.can_save and self.hub.state is HubState.OPEN and refused is None
        self.acts.publish.setEnabled(ok)
        self.acts.publish.setProperty("disabledReason", refused)
        tip = refused or str(self.acts.publish.property("defaultTip"))
        self.acts.publish.setToolTip(tip if refused else f"{tip} ({keys_text(self.acts.publish)})")
        self.acts.publish.setStatusTip(tip)

    def _undo(self) -> None:
        if self.document is not None:
            self.document.undo_stack.undo()

    def _redo(self) -> None:
        if self.document is not None:
            self.document.undo_stack.redo()

    # --- documents -----------------------------------------------------------
    def _set_document(self, doc: SpecDocument) -> None:
        """Show ``doc`` in a new designer page, replacing the current one."""
        for signal, slot in self._doc_links:
            signal.disconnect(slot)
        self._doc_links.clear()
        old_doc, old_panel = self.document, self.designer
        self.document = doc
        doc.setParent(self)
        self.designer = DesignerPanel(doc, self.ctx)
        self.designer.identity.watch(self.hub)  # ids are checked against the open ledger too
        self.designer.identity.newScheduleRequested.connect(self.new_schedule_from_current)
        if old_panel is not None:
            old_panel.save_layout(self.ctx.settings)
        self.designer.restore_layout(self.ctx.settings)
        self.stack.addWidget(self.designer)
        if old_panel is not None:
            self.stack.removeWidget(old_panel)
            old_panel.shutdown()
            old_panel.deleteLater()
        if old_doc is not None:
            old_doc.deleteLater()
        stack = doc.undo_stack
        self._link(stack.canUndoChanged, self.acts.undo.setEnabled)
        self._link(stack.canRedoChanged, self.acts.redo.setEnabled)
        self._link(stack.undoTextChanged, self._on_undo_text)
        self._link(stack.redoTextChanged, self._on_redo_text)
        self._link(doc.dirtyChanged, self._on_dirty)
        self._link(doc.changed, self._update_title)  # a new schedule's name is its id, which follows the title
        self._link(doc.pathChanged, self._on_path)
        self._link(doc.problemsChanged, self._update_save)
        self.acts.undo.setEnabled(stack.canUndo())
        self.acts.redo.setEnabled(stack.canRedo())
        self.autosaver.watch(doc)
        self.show_view("designer")  # a file just opened or started is what the person wants to see
        self._update_title()
        self._update_save()
        self.refresh_sidebar()
        if doc.path is not None:
            self.ctx.settings.setValue("files/last", str(doc.path))

    def _on_undo_text(self, text: str) -> None:
        what = f"Undo {text}" if text else "Undo the last edit"
        self.acts.undo.setToolTip(f"{what} ({keys_text(self.acts.undo)})")

    def _on_redo_text(self, text: str) -> None:
        what = f"Redo {text}" if text else "Redo the edit just undone"
        self.acts.redo.setToolTip(f"{what} ({keys_text(self.acts.redo)})")

    def _on_dirty(self, _dirty: bool) -> None:
        self._update_title()

    def _on_path(self, _path: str) -> None:
        self._update_title()
        self.refresh_sidebar()

    def _link(self, signal: Any, slot: Callable[..., Any]) -> None:
        signal.connect(slot)
        self._doc_links.append((signal, slot))

    # --- schedule and engine actions ----------------------------------------
    def publish(self) -> None:
        """Publish the open file as its schedule's next revision (Ctrl+Enter).

        The file is saved first: the ledger records the file each revision came
        from, and what runs is then what the file says. The id is checked again
        against the workspace; the publish dialog reads the ledger afresh and
        asks before replacing a schedule that was published from another file.
        """
        doc = self.document
        if doc is None or doc.spec is None:
            return
        blocked = doc.blocking()
        if blocked is not None:
            self.say(f"Cannot publish while the schedule has a problem: {blocked}", 5000)
            return
        if self.hub.state is not HubState.OPEN:
            why = self.hub.error or "it is still opening"
            self.say(f"Publishing needs an open ledger: {why}", 5000)
            return
        refused = refusal(self.ctx.rights, "publish")
        if refused is not None:
            self.say(f"Not published: {refused}", 8000)
            return
        if doc.path is None or doc.dirty:
            self.say("Saving first: the ledger records the file each revision comes from.")
            if not self.save() or doc.path is None or doc.spec is None:
                self.say("Not published: publishing needs the schedule saved to a file.", 5000)
                return
        sid = doc.spec.schedule_id
        check = check_id(sid, own=doc.path, on_disk=sid, names=self.names_in_use())
        if check.problem is not None:
            self.say(f"Not published: {check.problem}", 8000)
            return
        from scheduler_gui.designer.trust import ensure_trusted

        if doc.spec.task is not None and not ensure_trusted(doc, self.ctx.settings, self):
            self.say("Not published: this file's task is not trusted.", 5000)
            return
        dialog_class = load("scheduler_gui.monitor.publish_dialog", "PublishDialog")
        dialog = dialog_class(self.ctx, doc.spec, self, source_file=doc.path)
        if dialog.exec():
            self.hub.refresh_summaries()
        self.hub.refresh_rights()  # a refusal may mean a grant changed since the ledger opened

    def _schedule_action(self, name: str) -> None:
        doc = self.document
        sid = str(doc.value("scheduleId") or "") if doc is not None else ""
        act = {
            "pause": self.acts.pause_schedule,
            "resume": self.acts.resume_schedule,
            "disable": self.acts.disable_schedule,
            "run_now": self.acts.run_now,
            "backfill": self.acts.backfill,
        }[name]
        self._update_schedule_actions()  # what the summaries say now, not when the menu was drawn
        if not act.isEnabled():
            self.say(f"{act.text().replace('&', '').rstrip('…')}: {act.property('disabledReason')}", 8000)
            return
        func = load("scheduler_gui.monitor.schedule_actions", name)
        func(self.ctx, sid, self)
        self.hub.refresh_summaries()
        self.hub.refresh_rights()

    def engine_settings(self) -> None:
        """Engine ▸ Engine Settings…: the engine's labels and trusted users, for its next start."""
        from scheduler_gui.monitor.engine_settings import EngineSettingsDialog

        ledger = (self.ctx.ledger, self.ctx.clock) if self.ctx.ledger_open else None
        dialog = EngineSettingsDialog(self.ctx.settings, self, ledger=ledger)
        dialog.exec()
        dialog.deleteLater()

    def add_to_applications_menu(self) -> None:
        """Help ▸ Add to Applications Menu: what ``--install-desktop-entry`` does, said in the status bar."""
        from scheduler_gui.desktop.install import add_to_applications_menu

        self.say(add_to_applications_menu(), 10000)

    def about(self) -> None:
        where = self.ctx.ledger.where if self.ctx.ledger_open else (self.hub.error or "not opened")
        QMessageBox.about(
            self,
            "About Tidemark",
            f"Tidemark {version()}\nA schedule designer and monitor that tells the truth about time.\n\n"
            f"Time zone data: tzdata {tzdb_version()}\nLedger: {where}",
        )

    # --- geometry and closing ----------------------------------------------
    def _restore_geometry(self) -> None:
        s = self.ctx.settings
        geometry = s.value("window/geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(*DEFAULT_SIZE)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state)
        splitter = s.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)

    def save_settings(self) -> None:
        s = self.ctx.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/splitter", self.splitter.saveState())
        if self.designer is not None:
            self.designer.save_layout(s)
        s.sync()

    def say(self, text: str, timeout_ms: int = 0) -> None:
        """Show ``text`` in the status bar (whole words, all of it in the tooltip), for ``timeout_ms``
        milliseconds when above 0, else until the next message: the window's one way to say something."""
        self.messages.say(text, timeout_ms)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            refresh_icons(self.acts)  # light ↔ dark: the icons follow the text colour
        super().changeEvent(event)

    def quit(self) -> None:
        """File ▸ Quit, Ctrl+Q and the tray's Quit: close for good, by the usual questions."""
        self.quitting = True
        try:
            self.close()
        finally:
            self.quitting = False

    def closeEvent(self, event: QCloseEvent) -> None:
        running = self.hub.engine_state is EngineState.RUNNING
        if hide_to_tray.should_hide(self.ctx.settings, self.tray, running, self.quitting):
            hide_to_tray.hide(self, self.ctx.settings, self.tray)
            event.ignore()
            return
        if not self.maybe_save():
            event.ignore()
            return
        mode = ShutdownMode.STOP
        engine = self.hub.engine
        if engine is not None and int(getattr(engine, "tasks_running", 0)):
            answer = load("scheduler_gui.monitor.close_guard", "ask_on_close")(engine, self)
            if answer is None:  # keep the window open
                event.ignore()
                return
            mode = answer
        self.save_settings()
        self.tray.stop()
        self.hub.shutdown(mode)
        if self.designer is not None:
            self.designer.shutdown()
        event.accept()
        self.closed.emit()
