"""The occurrences view over a ledger of a million occurrences.

Setup (not timed): a SQLite ledger in a temporary directory holding a
simulated day of the demo schedules (``populate_demo_ledger``: real attempts,
a failing task, a hanging one), then 20 interval schedules published through
the core and 1,000,000 occurrences inserted in one ``INSERT ... SELECT`` over
a recursive sequence (SQLAlchemy Core), spread over those schedules with
mostly SUCCEEDED rows, some FAILED and a few UNKNOWN_EFFECT.

Timed, each against the 1 s target and against a baseline measured in the same
run (the raw ``SELECT ... LIMIT 100`` that the page needs, and ``COUNT(*)``):

* open: the occurrences view shown, its model counted, where now falls found
  and the rows around now fetched and painted (the table opens at now);
* end: ``scrollToBottom`` and the last page fetched;
* filter: a state filter applied (count and the rows around now again), the
  manual runs alone (the kind filter), and a text search.

Run by hand: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/monitor_bench.py [--rows N] [--keep PATH] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import text

from core.clock import FixedClock
from core.ledger import open_ledger, publish
from core.ledger.db import Ledger
from core.spec.validation import parse_spec

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
SCHEDULES = 20
TARGET = 1.0

_FILL = """
INSERT INTO occurrences (
    occurrence_id, schedule_id, revision, kind, nominal_local, fold_ordinal, resolved_utc, position_utc,
    due_at, logical_slot_id, business_period, state, reason, tzdb_version, attempt_count, claim_generation,
    finished_at, created_at, updated_at)
WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < :rows),
rows AS (SELECT n, datetime('2020-01-01 00:00:00', '+' || n || ' minutes') AS at FROM seq)
SELECT
    'occ-' || printf('%032x', n),
    printf('bench-%02d', n % :schedules),
    1,
    'scheduled',
    replace(at, ' ', 'T'),
    0,
    at || '.000000',
    at || '.000000',
    at || '.000000',
    'slot-' || printf('%032x', n),
    NULL,
    CASE WHEN n % 1009 = 0 THEN 'UNKNOWN_EFFECT' WHEN n % 97 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END,
    CASE WHEN n % 97 = 0 THEN 'exited with status 1; all 1 attempts used' ELSE 'exited with status 0' END,
    '2026a', 1, 1,
    at || '.000000', at || '.000000', at || '.000000'
FROM rows
"""


def _spec(i: int) -> Any:
    return parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": f"bench-{i:02d}",
            "revision": 1,
            "timeZone": "Europe/Paris" if i % 2 else "America/New_York",
            "kind": "interval",
            "every": "PT20M",
            "anchor": "2020-01-01T00:00:00Z",
            "horizon": "PT1H",
            "task": {"argv": ["/bin/true"]},
        }
    )


def build_ledger(path: Path, rows: int, clock: FixedClock) -> None:
    """A ledger file at ``path``: a simulated day of the demo schedules (real attempts,
    failures and unknown effects), then ``rows`` occurrences over 20 more schedules."""
    from PySide6.QtCore import QSettings

    from scheduler_gui.context import AppContext
    from scheduler_gui.monitor.demo_ledger import populate_demo_ledger

    settings = QSettings(str(path.with_suffix(".ini")), QSettings.Format.IniFormat)
    ctx = AppContext(clock=clock, workspace=path.parent, ledger_url=f"sqlite:///{path}", settings=settings)
    try:
        populate_demo_ledger(ctx, days=1)
        ledger = ctx.ledger
        with ledger.write() as session:
            for i in range(SCHEDULES):
                publish(session, _spec(i), clock)
        with ledger.engine.begin() as conn:
            conn.execute(text(_FILL), {"rows": rows, "schedules": SCHEDULES})
            conn.execute(text("ANALYZE"))
    finally:
        ctx.close()


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def baselines(ledger: Ledger) -> dict[str, float]:
    """The raw statements a page needs, timed on their own."""
    out = {}
    with ledger.engine.connect() as conn:
        out["count"], _ = timed(lambda: conn.execute(text("SELECT count(*) FROM occurrences")).scalar())
        out["first"], _ = timed(
            lambda: conn.execute(
                text(
                    "SELECT * FROM occurrences ORDER BY position_utc DESC, nominal_local DESC,"
                    " fold_ordinal DESC, occurrence_id DESC LIMIT 100"
                )
            ).all()
        )
        out["last"], _ = timed(
            lambda: conn.execute(
                text(
                    "SELECT * FROM occurrences ORDER BY position_utc, nominal_local,"
                    " fold_ordinal, occurrence_id LIMIT 100"
                )
            ).all()
        )
        like = "(occurrence_id LIKE '%exited with status 1%' OR reason LIKE '%exited with status 1%')"
        out["text"], _ = timed(
            lambda: (
                conn.execute(text(f"SELECT count(*) FROM occurrences WHERE {like}")).scalar(),
                conn.execute(
                    text(
                        f"SELECT * FROM occurrences WHERE {like} ORDER BY position_utc DESC, nominal_local DESC,"
                        " fold_ordinal DESC, occurrence_id DESC LIMIT 100"
                    )
                ).all(),
            )
        )
        out["manual"], _ = timed(
            lambda: (
                conn.execute(text("SELECT count(*) FROM occurrences WHERE kind = 'manual'")).scalar(),
                conn.execute(
                    text(
                        "SELECT * FROM occurrences WHERE kind = 'manual' ORDER BY position_utc DESC,"
                        " nominal_local DESC, fold_ordinal DESC, occurrence_id DESC LIMIT 100"
                    )
                ).all(),
            )
        )
        out["filter"], _ = timed(
            lambda: conn.execute(
                text(
                    "SELECT * FROM occurrences WHERE state = 'FAILED' ORDER BY position_utc DESC,"
                    " nominal_local DESC, fold_ordinal DESC, occurrence_id DESC LIMIT 100"
                )
            ).all()
        )
    return out


class _Stalls:
    """The longest pause of the GUI thread's event loop while something runs (responsiveness)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.longest = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self._last)
        self._last = now

    def __enter__(self) -> _Stalls:
        self.longest, self._last = 0.0, time.perf_counter()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.stop()


def _until(app: Any, done: Callable[[], bool], limit: float = 120.0) -> float:
    """Run the event loop until ``done()``; returns the seconds it took."""
    start = time.perf_counter()
    while not done():
        app.processEvents()
        if time.perf_counter() - start > limit:
            raise TimeoutError("gave up waiting")
        time.sleep(0.001)
    return time.perf_counter() - start


def _opened(model: Any) -> bool:
    """The filter's count is in and the rows the table opens on are shown."""
    return bool(model.ready and (model.rowCount() == 0 or model.row_at(model.opening_row, fetch=False) is not None))


def run_gui(url: str, clock: FixedClock, base: dict[str, float]) -> int:
    """Time the occurrences view itself; print each figure against the target and the baseline."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from scheduler_gui.context import AppContext
    from scheduler_gui.monitor.occurrences_view import OccurrencesView

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        ctx = AppContext(clock=clock, workspace=Path(tmp), ledger_url=url, settings=settings)
        assert ctx.ledger is not None  # opened (and checked) before timing, as the window does at start-up
        results: list[tuple[str, float, float, float]] = []
        stalls = _Stalls()
        with stalls:
            start = time.perf_counter()
            view = OccurrencesView(ctx)
            view.resize(1200, 800)
            view.show()
            model = view.model
            _until(app, lambda: _opened(model))
            view.table.viewport().repaint()
            results.append(
                (
                    "open (count + rows at now shown)",
                    time.perf_counter() - start,
                    base["count"] + base["first"],
                    stalls.longest,
                )
            )
        total = model.rowCount()
        with stalls:
            start = time.perf_counter()
            view.table.scrollToBottom()
            app.processEvents()
            _until(app, lambda: model.row_at(total - 1, fetch=False) is not None)
            view.table.viewport().repaint()
            results.append(
                ("scroll to the end (last page shown)", time.perf_counter() - start, base["last"], stalls.longest)
            )
        with stalls:
            start = time.perf_counter()
            view.state_box.setCurrentIndex(view.state_box.findText("Needs attention"))
            _until(app, lambda: _opened(model))
            view.table.viewport().repaint()
            results.append(
                ("filter: needs attention", time.perf_counter() - start, base["count"] + base["filter"], stalls.longest)
            )
        with stalls:
            start = time.perf_counter()
            view.text_edit.setText("exited with status 1")
            view.state_box.setCurrentIndex(0)  # applies the whole bar at once: one read
            _until(app, lambda: _opened(model))
            results.append(("filter: reason contains text", time.perf_counter() - start, base["text"], stalls.longest))
        with stalls:
            start = time.perf_counter()
            view.text_edit.clear()
            view.kind_box.setCurrentIndex(view.kind_box.findText("Manual runs (Run Now)"))  # the whole bar: one read
            _until(app, lambda: _opened(model))
            results.append(("filter: manual runs", time.perf_counter() - start, base["manual"], stalls.longest))
        view.close()
        model.wait()
        app.processEvents()
        view.deleteLater()
        app.processEvents()
        ctx.close()
    failed = 0
    print(f"{total:,} occurrences in the ledger")
    for name, spent, baseline, stall in results:
        verdict = "ok" if spent < TARGET else "OVER TARGET"
        failed += spent >= TARGET
        print(
            f"{name:38s} {spent * 1000:7.0f} ms  target {TARGET * 1000:.0f} ms {verdict:11s}"
            f" baseline {baseline * 1000:6.0f} ms ({spent / max(baseline, 1e-6):5.1f}x)"
            f"  longest GUI pause {stall * 1000:4.0f} ms"
        )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the ledger at this path")
    parser.add_argument("--quick", action="store_true", help="2,000 occurrences: checks the bench works")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows = 2_000
    clock = FixedClock(NOW)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "ledger.db"
        if not path.exists():
            spent, _ = timed(lambda: build_ledger(path, args.rows, clock))
            print(f"setup: {args.rows:,} occurrences inserted in {spent:.1f} s")
        ledger = open_ledger(f"sqlite:///{path}", clock)
        try:
            base = baselines(ledger)
            print("baseline (raw SQL): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in base.items()))
            failed = run_gui(f"sqlite:///{path}", clock, base)
            return 0 if args.quick else failed  # a quick run's figures say nothing of the targets
        finally:
            ledger.close()


if __name__ == "__main__":
    raise SystemExit(main())
