"""The window's link to the ledger: opened off the GUI thread after the first
paint, then the watcher, the embedded engine and the monitor views on it.

A ledger that cannot be opened (locked, damaged, unreachable) leaves its
message in :attr:`MonitorHub.error`; the designer keeps working without it.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QSplitter, QWidget

from core.errors import UserError
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.states import EngineState, HubState, ShutdownMode
from scheduler_gui.optional import load, placeholder

if TYPE_CHECKING:
    # The ledger package loads SQLAlchemy and Alembic: imported on the pool thread when the ledger opens.
    from core.ledger.queries import ScheduleSummary
    from core.ledger.rights import LedgerRights

#: Milliseconds to gather ledger events before the schedule summaries are read again
#: (they count occurrences per state: cheap on a small ledger, not on a million rows).
SUMMARY_DEBOUNCE_MS = 1500


class MonitorHub(QObject):
    """Owns the ledger's lifecycle for the window, and the monitor pieces that need it."""

    ledgerReady = Signal()
    ledgerFailed = Signal(str)
    summariesChanged = Signal(list)
    attentionChanged = Signal(int)
    engineStateChanged = Signal(str)
    rightsChanged = Signal()
    """The ledger's answer to what this window may do changed (``ctx.rights``), read again on F5."""
    message = Signal(str)
    """Something the person should read in the status bar (an engine or watcher error)."""

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.state = HubState.CLOSED  # closed → opening → open | failed
        self.error: str | None = None
        self.summaries: list[ScheduleSummary] = []
        self.attention = 0
        self.watcher: Any = None
        self.engine: Any = None
        self._start_engine = False
        # One worker opens the ledger, another reads the summaries: each delivers its own answers.
        self._opener = LatestOnly(self)
        self._opener.done.connect(self._on_opened)
        self._opener.failed.connect(self._on_open_failed)
        self._reader = LatestOnly(self)
        self._reader.done.connect(self._on_summaries)
        self._reader.failed.connect(lambda _message: self._summaries_done())
        self._rights = LatestOnly(self)
        self._rights.done.connect(self._on_rights)
        self._pauser = LatestOnly(self)
        self._pauser.done.connect(self._on_demos_paused)
        self._pauser.failed.connect(self.message)
        self._summary_timer = QTimer(self)
        self._summary_timer.setSingleShot(True)
        self._summary_timer.setInterval(SUMMARY_DEBOUNCE_MS)
        self._summary_timer.timeout.connect(self.refresh_summaries)
        self._summaries_running = False
        self._summaries_again = False

    # --- opening -------------------------------------------------------------
    def open(self, *, seed: bool = False, start_engine: bool = False) -> None:
        """Open the ledger on a pool thread (and seed the demo schedules into it when asked)."""
        if self.state is not HubState.CLOSED:
            return
        self.state = HubState.OPENING
        self._start_engine = start_engine
        self._opener.submit(lambda: self._open_work(seed))

    def retry(self) -> None:
        """Try a ledger that could not be used again (F5): it may have been unlocked or moved back."""
        if self.state is HubState.FAILED:
            self.state = HubState.CLOSED
            self.error = None
            self.open(start_engine=self._start_engine)

    def wait(self, msecs: int = 60_000) -> bool:
        """Block until the ledger work in flight is done (screenshots and tests)."""
        return all(w.wait(msecs) for w in (self._opener, self._reader, self._rights, self._pauser))

    def refresh_rights(self) -> None:
        """Ask the ledger again what this window may do (F5: a grant may have changed), off the GUI thread."""
        if self.state is not HubState.OPEN:
            return

        def work() -> LedgerRights:
            from core.ledger.rights import ledger_rights

            return ledger_rights(self.ctx.ledger)

        self._rights.submit(work)

    def _on_rights(self, rights: LedgerRights) -> None:
        if rights != self.ctx.rights:
            self.ctx.rights = rights
            self.rightsChanged.emit()

    def _open_work(self, seed: bool) -> tuple[list[ScheduleSummary], str | None, LedgerRights]:
        """Open (and seed) the ledger; the summaries, why the demo is missing when seeding failed,
        and what the ledger lets this window do."""
        from core.ledger.monitor_reads import schedule_summaries
        from core.ledger.rights import Act, ledger_rights
        from scheduler_gui.monitor.first_run import seed_demo_ledger

        ledger = self.ctx.ledger
        rights = ledger_rights(ledger)
        seed_problem = None
        if seed and rights.may(Act.PUBLISH):
            try:
                seed_demo_ledger(self.ctx)
            except UserError as exc:
                # The ledger itself is fine: say why the demo is missing and go on.
                seed_problem = f"The demo schedules were not published: {exc}"
        # With now: a schedule nothing is materialized for yet shows its next run at once.
        return schedule_summaries(ledger, self.ctx.clock.now()), seed_problem, rights

    def _on_opened(self, result: tuple[list[ScheduleSummary], str | None, LedgerRights]) -> None:
        summaries, seed_problem, self.ctx.rights = result
        self.state = HubState.OPEN
        if seed_problem is not None:
            self.message.emit(seed_problem)
        self._set_summaries(summaries)
        try:
            self._wire()
        except Exception as exc:  # a bug in a monitor module: report it, keep the window and the designer
            traceback.print_exc()
            self.message.emit(f"The monitor could not start ({type(exc).__name__}: {exc}); this is a bug")
        self.ledgerReady.emit()

    def _on_open_failed(self, message: str) -> None:
        self.state = HubState.FAILED
        self.error = message
        self.ledgerFailed.emit(message)

    def _on_summaries(self, summaries: list[ScheduleSummary]) -> None:
        self._set_summaries(summaries)
        self._summaries_done()

    def _wire(self) -> None:
        from scheduler_gui.monitor.engine_host import EngineHost
        from scheduler_gui.monitor.ledger_watch import LedgerWatcher

        self.watcher = LedgerWatcher(self.ctx, self)
        self.watcher.eventsArrived.connect(lambda _events: self._summary_timer.start())
        self.watcher.attentionCountChanged.connect(self._set_attention)
        self.watcher.errorOccurred.connect(self.message)
        self.engine = EngineHost(self.ctx, self)
        self.engine.stateChanged.connect(self.engineStateChanged)
        self.engine.errorOccurred.connect(self.message)
        self.engine.otherEngineSeen.connect(self.message)
        self.engine.outlookChanged.connect(lambda _o: self.engineStateChanged.emit(str(self.engine.state)))
        if self._start_engine and self.engine_refusal is None:
            self.engine.start()
        self.engineStateChanged.emit(str(self.engine.state))

    # --- summaries -----------------------------------------------------------
    def refresh_summaries(self) -> None:
        """Read the schedules' summaries again, off the GUI thread."""
        if self.state is not HubState.OPEN:
            return
        if self._summaries_running:  # one read at a time; one more after it, however many were asked for
            self._summaries_again = True
            return
        self._summaries_running = True

        def work() -> list[ScheduleSummary]:
            from core.ledger.monitor_reads import schedule_summaries

            return schedule_summaries(self.ctx.ledger, self.ctx.clock.now())

        self._reader.submit(work)

    def _summaries_done(self) -> None:
        self._summaries_running = False
        if self._summaries_again:
            self._summaries_again = False
            self.refresh_summaries()

    def _set_summaries(self, summaries: list[ScheduleSummary]) -> None:
        self.summaries = list(summaries)
        if self.watcher is None:
            self._set_attention(self.count("UNKNOWN_EFFECT", "FAILED"))
        self.summariesChanged.emit(self.summaries)
        self._pause_breaking_demos()

    def _pause_breaking_demos(self) -> None:
        """Pause the demos that break on purpose once each has a run waiting for a person
        (:mod:`scheduler_gui.monitor.demo_pause`), where this window may pause schedules."""
        from core.ledger.rights import Act
        from scheduler_gui.monitor.demo_pause import demos_to_pause, pause_note, remember_paused

        rights = self.ctx.rights
        if self.state is not HubState.OPEN or rights is None or not rights.may(Act.GATE) or self._pauser.busy:
            return
        due = demos_to_pause(self.summaries, self.ctx.settings)
        if not due:
            return
        remember_paused(self.ctx.settings, due)  # once: a person who resumes one keeps it running
        ledger, clock = self.ctx.ledger, self.ctx.clock

        def work() -> list[str]:
            from core.ledger.publish import Gate, change_gate

            for sid in due:
                change_gate(ledger, sid, Gate.PAUSE, clock, pause_note(sid))
            return due

        self._pauser.submit(work)

    def _on_demos_paused(self, paused: list[str]) -> None:
        names = " and ".join(paused)
        they = "they break" if len(paused) > 1 else "it breaks"
        self.message.emit(
            f"Paused the demo {names} after a first run that needs attention: {they} on purpose "
            "(Schedule ▸ Resume brings it back)."
        )
        self.refresh_summaries()

    def _set_attention(self, count: int) -> None:
        self.attention = int(count)
        self.attentionChanged.emit(self.attention)

    def count(self, *states: str) -> int:
        """Occurrences in any of ``states`` (``OccurrenceState`` values) across every schedule."""
        from core.ledger.states import OccurrenceState  # loaded already: the summaries came from the ledger

        keys = [OccurrenceState(state) for state in states]  # a misspelt state raises rather than counting 0
        return sum(s.counts.get(key, 0) for s in self.summaries for key in keys)

    def next_due(self) -> ScheduleSummary | None:
        due = [s for s in self.summaries if s.next_due_at is not None]
        return min(due, key=lambda s: s.next_due_at) if due else None  # type: ignore[arg-type, return-value]

    # --- views ---------------------------------------------------------------
    def make_view(self, key: str) -> QWidget:
        """The monitor page ``occurrences`` (with its detail panel), ``attention``, ``health``, ``schedules``
        or ``engines``."""
        if self.state is HubState.FAILED:
            return placeholder(f"The ledger cannot be used.\n{self.error}")
        if key == "occurrences":
            return self._occurrences_page()
        names = {
            "attention": ("attention", "AttentionView"),
            "health": ("health", "HealthView"),
            "schedules": ("schedules_view", "SchedulesView"),
            "engines": ("engines_view", "EnginesView"),
        }
        module, cls_name = names[key]
        view: QWidget = load(f"scheduler_gui.monitor.{module}", cls_name)(self.ctx, self.watcher)
        return view

    def _occurrences_page(self) -> QWidget:
        view_cls = load("scheduler_gui.monitor.occurrences_view", "OccurrencesView")
        detail_cls = load("scheduler_gui.monitor.detail", "OccurrenceDetail")
        page = QSplitter()
        page.setObjectName("occurrencesSplitter")
        page.setChildrenCollapsible(False)
        view = view_cls(self.ctx, self.watcher)
        page.addWidget(view)
        detail = detail_cls(self.ctx)
        page.addWidget(detail)
        page.view = view  # type: ignore[attr-defined]
        page.detail = detail  # type: ignore[attr-defined]
        # The table first: its Attempts and Last outcome columns are what a person scrolls to otherwise.
        page.setStretchFactor(0, 5)
        page.setStretchFactor(1, 2)
        page.setSizes([700, 280])
        view.occurrenceSelected.connect(detail.show_occurrence)
        return page

    # --- engine --------------------------------------------------------------
    @property
    def engine_state(self) -> EngineState:
        """The engine's own state, or what stands for it while there is no engine."""
        if self.engine is None:
            return {HubState.CLOSED: EngineState.OFF, HubState.OPENING: EngineState.WAITING}.get(
                self.state, EngineState.UNAVAILABLE
            )
        return EngineState(self.engine.state)

    @property
    def engine_refusal(self) -> str | None:
        """Why the ledger does not let this window run its engine (the role's kind), else None."""
        from core.ledger.rights import Act  # loaded already: the rights came from the ledger

        rights = self.ctx.rights
        return rights.refusal(Act.ENGINE) if rights is not None else None

    def toggle_engine(self) -> None:
        if self.engine is None:
            return
        refused = self.engine_refusal
        if refused is not None and self.engine.state is not EngineState.RUNNING:
            self.message.emit(f"The engine was not started: {refused}")
            return
        if self.engine.state is EngineState.RUNNING:
            self.engine.pause()
        else:
            self.engine.start()

    def shutdown(self, mode: ShutdownMode) -> None:
        """Stop what runs on the ledger (``detach``, ``wait`` or ``stop`` for the engine)."""
        self._summary_timer.stop()
        if self.engine is not None:
            self.engine.shutdown(mode)
        if self.watcher is not None:
            self.watcher.stop()
        self.wait(10_000)
