"""The window under load: many tasks started at once while every view updates.

The whole window (the same ``MainWindow`` as ``scheduler-gui``, offscreen) runs
on a temporary SQLite ledger with its embedded engine on the real clock. A
second thread plays ``schedctl run-now`` from another terminal: every
``--burst-every`` seconds it asks for a manual run of every schedule at once,
so the engine starts a burst of tasks (short, some failing, some slow) in one
pass. Meanwhile the GUI thread switches views, selects occurrences (the
detail panel reads their attempts), refreshes, and pauses and restarts the
engine now and then.

``faulthandler`` writes every thread's stack to stderr on a fatal error;
every Qt warning is collected (Qt warns when an object is created or a
timer started from a thread that does not own it); the largest gap between
two ticks of a 20 ms timer on the GUI thread is measured. The run fails
(exit 1) on any Qt warning, on an exception a slot did not catch (Qt only
prints those), on a failed engine pass, or when nothing ran.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/window_stress.py --minutes 3``
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import os
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from core.clock import SystemClock
from core.engine.admin import run_now
from core.ledger.models import Attempt
from core.ledger.publish import publish
from core.spec.validation import parse_spec
from scheduler_gui.app import build_application
from scheduler_gui.context import AppContext
from scheduler_gui.main_thread_gc import collect_on_this_thread
from scheduler_gui.main_window import MainWindow

DEMOS = sorted((Path(__file__).resolve().parent.parent / "resources" / "demo").glob("*.yaml"))
VIEWS = ("occurrences", "attention", "health", "schedules", "occurrences")
#: Qt messages that say nothing about threads or objects (the offscreen platform's limits).
HARMLESS = ("This plugin does not support",)


def _task(n: int) -> dict[str, Any]:
    """Short tasks, some failing, some slow enough to overlap the next burst."""
    kind = n % 4
    if kind == 0:
        return {"argv": ["/bin/sh", "-c", "echo started; exit 3"], "effect": "idempotent"}
    if kind == 1:
        return {"argv": ["/bin/sh", "-c", "echo working; sleep 1.5; echo done"], "effect": "idempotent"}
    return {"argv": [sys.executable, "-c", f"print('task {n}', flush=True)"], "effect": "idempotent"}


def _spec(n: int) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": f"stress-{n:02d}",
        "revision": 1,
        "timeZone": "Europe/Berlin",
        "kind": "interval",
        "every": "P1D",
        "anchor": "2020-01-01T03:00:00Z",
        "horizon": "P2D",
        "overlapPolicy": "ALLOW",
        "retry": {"maxAttempts": 1, "initialBackoff": "PT30S"},
        "task": _task(n),
    }


class Stress:
    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.messages: Counter[str] = Counter()
        self.exceptions: Counter[str] = Counter()
        self.bursts = 0
        self.requested = 0
        self.burst_errors: Counter[str] = Counter()
        self.engine_errors: Counter[str] = Counter()
        self.actions = 0
        self.max_gap = 0.0
        self._last_tick = time.monotonic()
        self._stop = threading.Event()
        settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
        workspace = folder / "workspace"
        workspace.mkdir()
        self.ctx = AppContext(
            clock=SystemClock(), workspace=workspace, ledger_url=f"sqlite:///{folder / 'ledger.db'}", settings=settings
        )
        with self.ctx.ledger.write() as session:
            for n in range(args.schedules):
                publish(session, parse_spec(_spec(n)), self.ctx.clock)
        self.window = MainWindow(self.ctx)
        self.window.show()

    # --- Qt messages --------------------------------------------------------------------------
    def on_message(self, kind: QtMsgType, _context: object, text: str) -> None:
        if kind == QtMsgType.QtDebugMsg or kind == QtMsgType.QtInfoMsg or text.startswith(HARMLESS):
            return
        self.messages[text] += 1
        print(f"Qt {kind.name}: {text} (on {threading.current_thread().name})", file=sys.stderr, flush=True)

    def on_exception(self, kind: type[BaseException], value: BaseException, tb: Any) -> None:
        """An exception no slot caught (Qt would only print it): counted, and printed once."""
        text = f"{kind.__name__}: {value}"
        if not self.exceptions[text]:
            sys.__excepthook__(kind, value, tb)
        self.exceptions[text] += 1

    # --- the other terminal ---------------------------------------------------------------------
    def bursts_thread(self) -> None:
        ids = [f"stress-{n:02d}" for n in range(self.args.schedules)]
        while not self._stop.wait(self.args.burst_every):
            self.bursts += 1
            for sid in ids:
                try:
                    run_now(self.ctx.ledger, sid, self.ctx.clock, note="stress burst")
                    self.requested += 1
                except Exception as exc:  # a locked ledger: counted, the next burst tries again
                    self.burst_errors[type(exc).__name__] += 1

    # --- the person at the window ---------------------------------------------------------------
    def tick(self) -> None:
        now = time.monotonic()
        self.max_gap = max(self.max_gap, now - self._last_tick)
        self._last_tick = now

    def act(self) -> None:
        self.actions += 1
        roll = self.rng.random()
        window = self.window
        if roll < 0.35:
            window.show_view(self.rng.choice(VIEWS))
        elif roll < 0.75:
            window.show_view("occurrences")
            view = getattr(window.page("occurrences"), "view", None)
            if view is not None and view.model.rowCount():
                row = self.rng.randrange(min(view.model.rowCount(), 60))
                view.table.setCurrentIndex(view.model.index(row, 0))
        elif roll < 0.82:
            window.refresh()
        elif roll < 0.88:
            # A schedule file opened in the designer: its preview runs on a worker; the last document's
            # panel and its workers are thrown away.
            window.open_path(self.rng.choice(DEMOS), ask=False)
            window.show_view(self.rng.choice(("designer", "preview", "timeline", "whatif")))
        elif roll < 0.9:
            window._rebuild_monitor_pages()  # as when the ledger opens again: every page built anew
        else:
            engine = window.hub.engine
            if engine is not None:
                engine.pause() if engine.state == "running" else engine.start()
        window.grab()  # paint everything now, as a screen would

    def run(self) -> int:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        ready = threading.Event()
        self.window.hub.ledgerReady.connect(ready.set)
        self.window.start_monitor(start_engine=True)
        deadline = time.monotonic() + 60
        while not ready.is_set() and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.01)
        engine = self.window.hub.engine
        if engine is None:
            print("the monitor did not start", file=sys.stderr)
            return 1
        engine.errorOccurred.connect(lambda m: self.engine_errors.update([m]))
        ticker = QTimer()
        ticker.timeout.connect(self.tick)
        ticker.start(20)
        actor = QTimer()
        actor.timeout.connect(self.act)
        actor.start(self.args.act_ms)
        burster = threading.Thread(target=self.bursts_thread, name="stress-run-now", daemon=True)
        burster.start()
        # An event loop of its own: QApplication.quit() would close the window, which asks about running tasks.
        loop = QEventLoop()
        QTimer.singleShot(int(self.args.minutes * 60_000), loop.quit)
        started = time.monotonic()
        loop.exec()
        self._stop.set()
        burster.join()
        ticker.stop()
        actor.stop()
        self.window.hub.shutdown("wait")
        return self.report(time.monotonic() - started)

    def report(self, seconds: float) -> int:
        with self.ctx.ledger.read() as session:
            attempts = session.query(Attempt).count()
        print(f"ran {seconds / 60:.1f} min: {self.bursts} bursts of {self.args.schedules} run-now requests")
        print(f"  {self.requested} manual runs requested, {attempts} attempts recorded, {self.actions} window actions")
        print(f"  largest gap between two 20 ms ticks on the GUI thread: {self.max_gap * 1000:.0f} ms")
        if self.burst_errors:
            print(f"  run-now refused (ledger busy): {dict(self.burst_errors)}")
        for text, count in self.engine_errors.most_common():
            print(f"  engine error x{count}: {text}")
        for text, count in self.messages.most_common():
            print(f"  Qt warning x{count}: {text}")
        for text, count in self.exceptions.most_common():
            print(f"  uncaught in a slot x{count}: {text}")
        failed = bool(self.messages) or bool(self.exceptions) or bool(self.engine_errors) or attempts == 0
        print("FAILED" if failed else "OK: no crash, no Qt warning, no uncaught exception, no failed engine pass")
        return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--minutes", type=float, default=3.0, help="how long to run (default 3)")
    p.add_argument("--schedules", type=int, default=12, help="schedules run at once in each burst (default 12)")
    p.add_argument("--burst-every", type=float, default=2.0, help="seconds between bursts (default 2)")
    p.add_argument("--act-ms", type=int, default=150, help="milliseconds between window actions (default 150)")
    p.add_argument("--seed", type=int, default=11, help="seed of the window actions")
    p.add_argument(
        "--python-gc",
        action="store_true",
        help="let Python collect garbage on any thread, as before scheduler_gui.main_thread_gc (to see the bench "
        "catch that crash)",
    )
    args = p.parse_args(argv)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    app = build_application("window-stress")
    if args.python_gc:
        collect_on_this_thread(app).stop()  # type: ignore[arg-type]
        gc.enable()
    with tempfile.TemporaryDirectory(prefix="tidemark-stress-") as tmp:
        stress = Stress(args, Path(tmp))
        qInstallMessageHandler(stress.on_message)
        sys.excepthook = stress.on_exception
        try:
            return stress.run()
        finally:
            stress.ctx.close()


if __name__ == "__main__":
    raise SystemExit(main())
