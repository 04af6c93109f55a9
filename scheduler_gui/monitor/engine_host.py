"""The embedded engine: the same :class:`core.engine.engine.Engine` as
``schedctl engine run``, driven by a QThread so the window never waits on it.

The thread announces the engine in the ledger's ``engines`` table (kind
``app``), runs a pass (``run_once(wait=False)``) every poll interval, and
reads the engine's outlook (tasks running, next due) after each one. It never
becomes a second dispatcher: when another live engine dispatches on the ledger
(``schedctl engine run`` here, or on another machine sharing PostgreSQL) the
state is ``other-engine`` and the thread only watches until that engine is
gone, unless ``start(force=True)``.

The engine has the labels and trusted users of the window's engine settings
(:mod:`.engine_settings`), read when its thread starts: it announces and applies
them (a change applies from the engine's next start).

States: ``stopped``, ``running``, ``paused``, ``other-engine``, ``error``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal

from core.engine.presence import (
    EngineId,
    EngineInfo,
    EngineRunningError,
    Heartbeat,
    Outlook,
    announce,
    dispatcher_besides,
    engine_outlook,
    retire,
)
from core.errors import UserError
from core.ledger.states import EngineKind, EnginePresence
from core.team.placement import Placement
from scheduler_gui.a11y import accessible
from scheduler_gui.monitor.engine_settings import app_placement
from scheduler_gui.monitor.states import EngineState, ShutdownMode

if TYPE_CHECKING:
    from core.engine.engine import Engine, PassReport
    from scheduler_gui.context import AppContext

#: Settings keys.
AUTOSTART_KEY = "engine/autostart"
POLL_KEY = "engine/poll_seconds"
#: Passes this many poll intervals apart while another engine is watched.
WATCH_EVERY = 5
#: Seconds the loop waits after a failed pass before trying again.
ERROR_BACKOFF = 5.0


@dataclass(frozen=True)
class HostFailure:
    """A pass that failed: what a person reads."""

    message: str


def _message(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, UserError):
        return text
    return f"the engine stopped on an unexpected error: {type(exc).__name__}: {text}"


class _Loop(QThread):
    """The engine's thread. Talks to the host only through signals and a few flags."""

    ran = Signal(object)  # PassReport
    looked = Signal(object)  # Outlook
    becameState = Signal(str)
    sawOther = Signal(object)  # EngineInfo
    failed = Signal(str)

    def __init__(self, host: EngineHost, placement: Placement) -> None:
        super().__init__()
        self.setObjectName("tidemark-engine")
        self._host = host
        #: The engine's labels and whom it trusts (read from the settings on the GUI thread).
        self.placement = placement
        self.want_run = threading.Event()
        self.force = False
        self.quit_flag = threading.Event()
        self.wake = threading.Event()
        self.engine: Engine | None = None
        self.engine_id: EngineId | None = None
        self.heartbeat: Heartbeat | None = None
        self.dispatching = False

    def run(self) -> None:  # the thread
        from core.desktop.wake.probe import host_backend
        from core.engine.engine import Engine, EngineOptions

        ctx = self._host.ctx
        try:
            ledger = ctx.ledger
            self.engine = Engine(ledger, ctx.clock, EngineOptions(), placement=self.placement, wake=host_backend())
        except Exception as exc:
            self.failed.emit(_message(exc))
            self.becameState.emit(EngineState.ERROR)
            return
        engine = self.engine
        clock = ctx.clock
        poll = self._host.poll_seconds
        in_error = False
        alerting = False
        while not self.quit_flag.is_set():
            wait = poll
            try:
                if self.want_run.is_set() and not self.dispatching:
                    other = self._other(ledger, clock)
                    if other is not None:
                        self.sawOther.emit(other)
                        self.becameState.emit(EngineState.OTHER_ENGINE)
                        self._sleep(poll * WATCH_EVERY)
                        continue
                    self.dispatching = True
                    if not alerting:  # the outbox is sent on a thread of its own, until the window closes
                        engine.alerts.start(self.quit_flag, poll)
                        alerting = True
                    if self.heartbeat is not None:
                        self.heartbeat.state = EnginePresence.RUNNING
                    self.becameState.emit(EngineState.RUNNING)
                elif not self.want_run.is_set() and self.dispatching:
                    self.dispatching = False
                    if self.heartbeat is not None:
                        self.heartbeat.state = EnginePresence.PAUSED
                    self.becameState.emit(EngineState.PAUSED)
                if self.dispatching:
                    report = engine.run_once(wait=False)
                    self.ran.emit(report)
                self.looked.emit(engine_outlook(ledger, engine.worker))
                if in_error:
                    in_error = False
                    self.becameState.emit(EngineState.RUNNING if self.dispatching else EngineState.PAUSED)
            except Exception as exc:
                in_error = True
                self.failed.emit(_message(exc))
                self.becameState.emit(EngineState.ERROR)
                wait = max(poll, ERROR_BACKOFF)
            self._sleep(wait)

    def _other(self, ledger: Any, clock: Any) -> EngineInfo | None:
        """Another dispatcher on the ledger (None when forced); announces this engine when there is none."""
        if self.engine_id is None:
            try:
                self.engine_id = announce(
                    ledger, clock, EngineKind.APP, exclusive=not self.force, placement=self.placement
                )
            except EngineRunningError as exc:
                return exc.other
            self.heartbeat = Heartbeat(ledger, clock, self.engine_id).start()
            if self.engine is not None:  # engines sharing the ledger split materialization
                self.engine.context.share.engine_id = self.engine_id
            return None
        if self.force:
            return None
        return dispatcher_besides(ledger, clock, self.engine_id)

    def _sleep(self, seconds: float) -> None:
        self.wake.wait(seconds)
        self.wake.clear()


class EngineHost(QObject):
    """Runs the embedded engine off the GUI thread and reports what it does.

    ``start()`` asks it to dispatch, ``pause()`` to stop claiming (tasks already
    running finish), ``shutdown(mode)`` ends it when the window closes.
    """

    stateChanged = Signal(str)
    passFinished = Signal(object)
    otherEngineSeen = Signal(str)
    errorOccurred = Signal(str)
    outlookChanged = Signal(object)

    def __init__(self, ctx: AppContext, parent: QObject | None = None, *, poll_seconds: float | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        if poll_seconds is None:
            poll_seconds = _setting_seconds(ctx.settings.value(POLL_KEY, 1.0))
        self.poll_seconds = poll_seconds
        self._state = EngineState.STOPPED
        self._outlook = Outlook(0, None, None)
        self._other: EngineInfo | None = None
        self.last_error: str | None = None
        self.last_report: PassReport | None = None
        self._loop: _Loop | None = None
        app = QCoreApplication.instance()
        if app is not None:
            # Quitting without a shutdown (the window's close was bypassed): detach, never abort a thread.
            app.aboutToQuit.connect(self._on_quit)

    # --- what it shows ---------------------------------------------------------
    @property
    def state(self) -> EngineState:
        return self._state

    @property
    def tasks_running(self) -> int:
        """Tasks this engine is running now (from the latest outlook, or the engine itself)."""
        engine = self._loop.engine if self._loop is not None else None
        if engine is not None and not engine.busy():
            return 0
        return self._outlook.tasks_running

    @property
    def next_due(self) -> datetime | None:
        return self._outlook.next_due_at

    @property
    def next_due_schedule(self) -> str | None:
        return self._outlook.next_due_schedule

    @property
    def other_engine(self) -> EngineInfo | None:
        return self._other

    @property
    def autostart(self) -> bool:
        """Whether the engine starts with the app (setting ``engine/autostart``, default on)."""
        value = self.ctx.settings.value(AUTOSTART_KEY, True)
        return value if isinstance(value, bool) else str(value).lower() not in ("false", "0", "no")

    def describe_other(self) -> str | None:
        if self._other is None:
            return None
        return self._other.describe(self.ctx.clock.now())

    # --- control ---------------------------------------------------------------
    def start(self, force: bool = False) -> None:
        """Dispatch. Refused (state ``other-engine``) while another engine dispatches, unless ``force``."""
        loop = self._loop
        if loop is None or loop.isFinished():
            try:
                placement = app_placement(self.ctx.settings)
            except UserError as exc:  # the settings file was edited into nonsense: say so, run nothing
                self._on_failed(str(exc))
                self._set_state(EngineState.ERROR)
                return
            loop = _Loop(self, placement)
            loop.ran.connect(self._on_pass)
            loop.looked.connect(self._on_outlook)
            loop.becameState.connect(self._set_state)
            loop.sawOther.connect(self._on_other)
            loop.failed.connect(self._on_failed)
            self._loop = loop
        loop.force = loop.force or force
        loop.want_run.set()
        loop.wake.set()
        if not loop.isRunning():
            loop.start()

    def start_if_autostart(self) -> bool:
        if self.autostart:
            self.start()
            return True
        return False

    def pause(self) -> None:
        """Stop claiming new occurrences; tasks already running finish and are recorded."""
        if self._loop is None:
            return
        self._loop.want_run.clear()
        self._loop.wake.set()

    def shutdown(self, mode: ShutdownMode | str = ShutdownMode.WAIT) -> None:
        """End the engine when the window closes.

        ``detach``: claim nothing more and leave running tasks to finish (their
        outcomes are still recorded); when the engine service is installed, it
        is started to take over. ``wait``: wait for running tasks, showing
        progress (cancelling the wait stops them). ``stop``: stop running tasks
        now; the engine records them as lost and its rules decide (a retry, or
        unknown effect for a non-idempotent task).
        """
        try:
            mode = ShutdownMode(mode)
        except ValueError:
            raise ValueError(f"shutdown mode {mode!r}: one of {', '.join(ShutdownMode)}") from None
        loop = self._loop
        if loop is None:
            self._set_state(EngineState.STOPPED)
            return
        loop.want_run.clear()
        loop.quit_flag.set()
        loop.wake.set()
        loop.wait()
        engine = loop.engine
        if engine is not None:
            engine.stop()  # its workers claim nothing more; running tasks end and are recorded
            if mode is ShutdownMode.WAIT and not self._wait_with_progress(engine):
                mode = ShutdownMode.STOP
            if mode is ShutdownMode.STOP:
                _stop_tasks(engine)
        if loop.heartbeat is not None:
            loop.heartbeat.stop()
        if loop.engine_id is not None:
            with contextlib.suppress(Exception):  # the window closes either way; a stale row goes stale
                retire(self.ctx.ledger, self.ctx.clock, loop.engine_id)
        if mode is ShutdownMode.DETACH:
            self._hand_over()
        self._loop = None
        self._set_state(EngineState.STOPPED)

    # --- inner workings --------------------------------------------------------
    def _on_quit(self) -> None:
        if self._loop is not None:
            self.shutdown(ShutdownMode.DETACH)

    def _wait_with_progress(self, engine: Engine) -> bool:
        """Wait for running tasks, with a progress dialog when there is a window; False when cancelled."""
        from PySide6.QtWidgets import QApplication, QProgressDialog

        if not engine.busy():
            return True
        dialog = None
        if isinstance(QCoreApplication.instance(), QApplication):
            dialog = QProgressDialog("Waiting for running tasks to finish…", "Stop them now", 0, 0)
            dialog.setWindowTitle("Tidemark")
            accessible(
                dialog,
                "Waiting for running tasks",
                "Tidemark closes when the tasks it started have finished and been recorded",
            )
            dialog.setMinimumDuration(300)
        try:
            while not engine.wait_idle(timeout=0.1):
                if dialog is not None:
                    dialog.setLabelText(f"Waiting for {self._count_running(engine)} running task(s) to finish…")
                    if dialog.wasCanceled():
                        return False
                QCoreApplication.processEvents()
            return True
        finally:
            if dialog is not None:
                dialog.close()
                dialog.deleteLater()

    def _count_running(self, engine: Engine) -> int:
        try:
            return engine_outlook(self.ctx.ledger, engine.worker).tasks_running
        except Exception:
            return self._outlook.tasks_running

    def _hand_over(self) -> None:
        from core.desktop.service import service_installed, start_installed_service

        with contextlib.suppress(Exception):
            if service_installed():
                start_installed_service()

    def _set_state(self, value: str) -> None:
        state = EngineState(value)  # the loop's signal carries its value
        if state is EngineState.RUNNING:
            self._other = None
        if state != self._state:
            self._state = state
            self.stateChanged.emit(state)

    def _on_pass(self, report: PassReport) -> None:
        self.last_report = report
        self.passFinished.emit(report)

    def _on_outlook(self, value: Outlook) -> None:
        self._outlook = value
        self.outlookChanged.emit(value)

    def _on_other(self, info: EngineInfo) -> None:
        self._other = info
        self.otherEngineSeen.emit(info.describe(self.ctx.clock.now()))

    def _on_failed(self, message: str) -> None:
        self.last_error = message
        self.errorOccurred.emit(message)


def _setting_seconds(value: object, default: float = 1.0) -> float:
    """A poll interval from the settings file: a number of seconds in [0.05, 60], else the default."""
    try:
        seconds = float(str(value))
    except ValueError:
        return default
    return min(max(seconds, 0.05), 60.0) if seconds == seconds else default  # NaN is not a number of seconds


def _stop_tasks(engine: Engine, timeout: float = 30.0) -> None:
    """Stop the engine with its running tasks (``stop(kill=True)``: SIGTERM to each task's
    process group, SIGKILL after a grace period) and wait for it to record them: killed
    by a signal, settled by its rules."""
    engine.stop(kill=True)
    deadline = time.monotonic() + timeout
    while not engine.wait_idle(timeout=0.2) and time.monotonic() < deadline:
        pass
