"""The window's two latencies, each beside a baseline measured in the same run.

1. Edit to refreshed preview: a value of the document is set and the preview
   of 500 rows is rebuilt off the GUI thread and shown by the preview table's
   model. Baseline: the bare core preview of the same 500 rows on one thread.
   The preview waits for a pause in typing first (the debounce); that wait is
   a choice, not work, and is printed separately.
2. Launch to first shown window: ``scheduler-gui`` in a separate process that
   prints when its window is first painted and exits. Baseline: a bare
   PySide6 process that shows an empty window.

Run: ``make bench-gui`` (offscreen), or ``.venv/bin/python bench/gui_bench.py
[--quick]``. Targets: under 100 ms and under 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from core.clock import FixedClock
from core.recurrence.preview import build_preview
from scheduler_gui.app import EXIT_AFTER_SHOW
from scheduler_gui.context import AppContext
from scheduler_gui.preview.panel import PreviewPanel
from scheduler_gui.preview.service import DEBOUNCE_MS, PreviewService
from scheduler_gui.workspace.document import SpecDocument

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "resources" / "demo" / "hourly-fallback.yaml"
ROWS = 500
RUNS = 7
LAUNCHES = 3
NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
EDIT_TARGET_MS = 100.0
LAUNCH_TARGET_S = 1.5

BARE_WINDOW = (
    "import time; t = time.perf_counter()\n"
    "from PySide6.QtWidgets import QApplication, QMainWindow\n"
    "app = QApplication([]); w = QMainWindow(); w.resize(1280, 800); w.show(); app.processEvents()\n"
    "print(f'shown {(time.perf_counter() - t) * 1000:.1f} ms', flush=True)\n"
)


def edit_to_preview(tmp: Path, runs: int = RUNS) -> tuple[float, float]:
    """Median ms from an edit to the refreshed 500-row preview in the table's model, and the bare core's."""
    app = QApplication.instance() or QApplication([])
    clock = FixedClock(NOW)
    ctx = AppContext(clock=clock, workspace=tmp, settings=QSettings(str(tmp / "bench.ini"), QSettings.Format.IniFormat))
    doc = SpecDocument()
    doc.load(SPEC)
    service = PreviewService(doc, clock)
    panel = PreviewPanel(service, ctx)
    panel.count_spin.setValue(ROWS)
    service.set_count(ROWS)

    loop = QEventLoop()
    shown: list[int] = []

    def on_ready(preview: object) -> None:
        # Connected after the panel: its model has taken the rows when this runs.
        shown.append(panel.model.rowCount())
        loop.quit()

    service.ready.connect(on_ready)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)

    def one(minute: int) -> float:
        shown.clear()
        t0 = time.perf_counter()
        doc.set_value("rule", f"FREQ=HOURLY;BYMINUTE={minute}")
        service.refresh_now()  # what the debounce timer calls once typing pauses
        guard.start(30_000)
        loop.exec()
        elapsed = (time.perf_counter() - t0) * 1000
        if not shown or shown[0] < ROWS:
            raise SystemExit(f"the preview did not show {ROWS} rows (got {shown})")
        return elapsed

    one(1)  # warm-up: imports, zone caches, thread start
    measured = statistics.median(one(m) for m in range(2, 2 + runs))

    spec = doc.spec
    assert spec is not None

    def bare() -> float:
        t0 = time.perf_counter()
        rows = build_preview(spec, NOW, count=ROWS).rows
        assert len(rows) >= ROWS
        return (time.perf_counter() - t0) * 1000

    bare()
    baseline = statistics.median(bare() for _ in range(runs))
    service.wait()
    panel.deleteLater()
    app.processEvents()
    return measured, baseline


def _launch(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0 or not done.stdout.startswith("shown"):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()[-500:]}")
    return elapsed


def launch_to_window(tmp: Path, launches: int = LAUNCHES) -> tuple[float, float]:
    """Median seconds from spawning the app to its first painted window, and a bare PySide6 window's."""
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        **{EXIT_AFTER_SHOW: "1"},
    )
    script = Path(sys.executable).with_name("scheduler-gui")  # the installed command, as a person starts it
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "scheduler_gui.app"]
    app_cmd = [*launcher, "--workspace", str(tmp / "ws"), "--db", str(tmp / "l.db")]
    bare_cmd = [sys.executable, "-c", BARE_WINDOW]
    _launch(app_cmd, env)  # first start copies the demo workspace; later starts are the ordinary case
    measured = statistics.median(_launch(app_cmd, env) for _ in range(launches))
    baseline = statistics.median(_launch(bare_cmd, env) for _ in range(launches))
    return measured, baseline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two edits and one launch of each: checks the bench works")
    args = parser.parse_args(argv)
    runs, launches = (2, 1) if args.quick else (RUNS, LAUNCHES)
    with tempfile.TemporaryDirectory(prefix="tidemark-bench-") as name:
        tmp = Path(name)
        edit_ms, core_ms = edit_to_preview(tmp, runs)
        launch_s, bare_s = launch_to_window(tmp, launches)
    print(f"edit → preview of {ROWS} rows in the table: {edit_ms:7.1f} ms  (target < {EDIT_TARGET_MS:.0f} ms)")
    print(f"  baseline, bare core preview of {ROWS} rows: {core_ms:7.1f} ms  ratio {edit_ms / core_ms:.2f}x")
    print(f"  plus the typing pause before a rebuild starts: {DEBOUNCE_MS} ms")
    print(f"launch → first shown window:              {launch_s:7.2f} s   (target < {LAUNCH_TARGET_S:.1f} s)")
    print(f"  baseline, bare PySide6 window:          {bare_s:7.2f} s   ratio {launch_s / bare_s:.2f}x")
    ok = edit_ms < EDIT_TARGET_MS and launch_s < LAUNCH_TARGET_S
    print("both targets met" if ok else "a target is missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
