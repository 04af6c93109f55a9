"""``scheduler-gui --screenshot PATH --view V``: the window rendered offscreen
at a fixed size, on a fixed clock, with a temporary copy of the demo workspace
and, for the monitor views, a demo ledger. Used for the README's images.

Nothing waits on the wall clock: the preview is built and waited for, and the
event queue is drained until the views have nothing left to do.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

#: Just before the 2027 spring change in New York, so the preview shows a gap.
SCREENSHOT_NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
DEFAULT_SPEC = "daily-ops-summary.yaml"
#: The zone of the demo workspace (and of the machine the pictures pretend to be on).
SCREENSHOT_ZONE = "America/New_York"
MONITOR_VIEWS = ("monitor", "attention", "detail", "health", "engines")
#: The schedule the wake-alerts scene opens (when no --spec is given): it wakes the machine and has routes.
ALERTS_SPEC = Path(__file__).resolve().parents[1] / "docs" / "examples" / "laptop-report-alerts.yaml"
#: The ledger's default routes the alert-settings scene shows.
DEFAULT_ROUTES = ("mailto:oncall@example.com", "{secret: TEAM_CHAT_HOOK}")


def _drain(rounds: int = 20) -> None:
    """Deliver queued signals and let pool threads finish, until both are quiet."""
    from PySide6.QtCore import QCoreApplication, QThreadPool

    for _ in range(rounds):
        QCoreApplication.processEvents()
        QThreadPool.globalInstance().waitForDone(5000)
        QCoreApplication.sendPostedEvents()
    QCoreApplication.processEvents()


def render(window: object, view: str, size: tuple[int, int], path: Path) -> bool:
    """Show ``view`` in ``window`` at ``size``, wait until it is drawn from real data, save a PNG."""
    from scheduler_gui.main_window import MainWindow

    assert isinstance(window, MainWindow)
    window.resize(*size)
    window.show()
    if view == "alert-settings":
        return _render_engine_settings(window, path)
    if view in MONITOR_VIEWS:
        window.hub.wait()
        _drain()
        window.show_view("occurrences" if view in ("monitor", "detail") else view)
        if view == "detail":
            _select_first_occurrence(window)
    else:
        window.show_view("designer" if view == "wake-alerts" else view)
    if window.designer is not None:
        window.designer.service.refresh_now()
        window.designer.service.wait()
    for _ in range(2):
        window.hub.wait()
        _drain()
        _wait_for_views(window)
    if view == "preview" and window.designer is not None:
        # The preview's picture shows a clock change, the reason the table exists.
        jump = getattr(window.designer.preview, "next_transition", None)
        if callable(jump):
            jump()
            _drain(2)
    if view == "wake-alerts":
        _show_wake_and_alerts(window)
    return window.grab().save(str(path), "PNG")


def _show_wake_and_alerts(window: object) -> None:
    """Open "When things go wrong" and scroll the settings to it: the wake checkbox at the top, the
    schedule's alert routes below; the settings take most of the height."""
    designer = window.designer  # type: ignore[attr-defined]
    designer.recovery_section.set_open(True)
    recovery = designer.recovery
    total = sum(designer.splitter.sizes())
    designer.splitter.setSizes([total - 160, 160])
    _drain(2)
    area = designer.settings_area
    area.ensureWidgetVisible(recovery.alerts, 0, 8)
    top = designer.recovery_section.mapTo(area.widget(), designer.recovery_section.rect().topLeft()).y()
    area.verticalScrollBar().setValue(top)
    _drain(2)


def _render_engine_settings(window: object, path: Path) -> bool:
    """Engine ▸ Engine Settings… with the ledger's default alert routes read in, as a picture of the dialog."""
    from scheduler_gui.monitor.engine_settings import EngineSettingsDialog

    ctx = window.ctx  # type: ignore[attr-defined]
    dialog = EngineSettingsDialog(ctx.settings, window, ledger=(ctx.ledger, ctx.clock))  # type: ignore[arg-type]
    dialog.show()
    assert dialog.alerts is not None
    dialog.alerts.wait()
    _drain()
    dialog.resize(dialog.sizeHint())  # as tall as it asks (adjustSize keeps to a share of the offscreen screen)
    _drain(2)
    ok = dialog.grab().save(str(path), "PNG")
    dialog.close()
    dialog.deleteLater()
    return ok


def seed_default_routes(ctx: object) -> None:
    """The demo ledger's default alert routes and mail server (the alert-settings scene)."""
    from core.ledger.alert_queries import AlertSettings, save_alert_settings
    from core.team.alert_routes import Smtp

    smtp = Smtp("smtp.example.com", 587, "starttls", "tidemark", "SMTP_PASSWORD", "tidemark@example.com")
    settings = AlertSettings(DEFAULT_ROUTES, frozenset({"FAILED", "UNKNOWN_EFFECT"}), smtp)
    save_alert_settings(ctx.ledger, settings, ctx.clock.now())  # type: ignore[attr-defined]


def _wait_for_views(window: object) -> None:
    """Let the shown monitor page (and its detail panel) finish loading from the ledger."""
    from PySide6.QtCore import QCoreApplication

    page = window.stack.currentWidget()  # type: ignore[attr-defined]
    view = getattr(page, "view", None)
    targets = [page, view, getattr(page, "detail", None)]
    for widget in (page, view):
        model = getattr(widget, "model", None)
        if model is not None and not callable(model):  # a model held as an attribute, not Qt's model() method
            targets.append(model)
    for target in targets:
        wait = getattr(target, "wait", None)
        if callable(wait):
            wait()
            QCoreApplication.processEvents()  # deliver the result; it may queue the next read
            wait()
    QCoreApplication.processEvents()


def announce_team(ctx: object) -> None:
    """Three engines on the demo ledger, as on a team's: this machine's, a shared build
    machine (a label, trusting alice) that refuses the demo schedules, and a laptop last seen
    three hours ago."""
    from datetime import timedelta

    from core.clock import FixedClock
    from core.engine.presence import announce
    from core.ledger.states import EngineKind
    from core.team.actor import Actor, current_actor
    from core.team.placement import Placement

    ledger, now, me = ctx.ledger, ctx.clock.now(), current_actor()  # type: ignore[attr-defined]
    earlier = FixedClock(now - timedelta(hours=3))
    announce(
        ledger, earlier, EngineKind.APP, host="laptop-bob", pid=5151, placement=Placement.of(Actor("bob", "laptop-bob"))
    )
    build = Placement.of(Actor("ci", "build-1"), {"gpu": "yes"}, ["alice"])
    announce(ledger, ctx.clock, EngineKind.HEADLESS, host="build-1", pid=4242, placement=build)  # type: ignore[attr-defined]
    announce(ledger, ctx.clock, EngineKind.HEADLESS, placement=Placement.of(me, {"site": "office"}))  # type: ignore[attr-defined]


def _select_first_occurrence(window: object) -> None:
    """Open the detail panel on the demo ledger's most interesting occurrence (unknown effect, else failed)."""
    from core.ledger.monitor_reads import first_occurrence
    from core.ledger.states import OccurrenceState

    page = window.page("occurrences")  # type: ignore[attr-defined]
    detail = getattr(page, "detail", None)
    if detail is None:
        return
    ctx = window.ctx  # type: ignore[attr-defined]
    found = first_occurrence(
        ctx.ledger, (OccurrenceState.UNKNOWN_EFFECT, OccurrenceState.FAILED, OccurrenceState.SUCCEEDED)
    )
    if found is not None:
        detail.show_occurrence(found.occurrence_id)


def take_screenshot(path: Path, view: str, spec: Path | None, size: tuple[int, int]) -> int:
    """The ``--screenshot`` command: 0 when the PNG is written, 1 when it could not be."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QSettings

    from core.clock import FixedClock
    from core.errors import UserError
    from core.spec.workspace_settings import choose_zone
    from scheduler_gui.app import build_application
    from scheduler_gui.context import AppContext
    from scheduler_gui.main_window import MainWindow
    from scheduler_gui.monitor.states import ShutdownMode
    from scheduler_gui.optional import load
    from scheduler_gui.workspace.folder import seed_workspace

    build_application()
    with tempfile.TemporaryDirectory(prefix="tidemark-shot-") as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        seed_workspace(workspace)
        if spec is not None:
            target = workspace / spec.name
            if not target.exists():
                shutil.copyfile(spec, target)
            spec = target
        else:
            spec = workspace / DEFAULT_SPEC
        if view == "wake-alerts" and spec.name == DEFAULT_SPEC and ALERTS_SPEC.is_file():  # a source checkout
            spec = workspace / ALERTS_SPEC.name
            shutil.copyfile(ALERTS_SPEC, spec)
        # The demo workspace's zone, confirmed: the pictures show the views, not the first start's question.
        choose_zone(workspace, SCREENSHOT_ZONE, SCREENSHOT_ZONE)
        ctx = AppContext(
            clock=FixedClock(SCREENSHOT_NOW),
            workspace=workspace,
            ledger_url=f"sqlite:///{root / 'ledger.db'}",
            settings=QSettings(str(root / "settings.ini"), QSettings.Format.IniFormat),
            machine_zone=lambda: SCREENSHOT_ZONE,
        )
        try:
            populate = load("scheduler_gui.monitor.demo_ledger", "populate_demo_ledger")
            if populate is not None:
                populate(ctx)
            if view == "engines":
                announce_team(ctx)
            if view == "alert-settings":
                seed_default_routes(ctx)
            window = MainWindow(ctx)
            window.open_initial(spec)
            window.start_monitor()
            ok = render(window, view, size, path)
            window.hub.shutdown(ShutdownMode.STOP)
            if window.designer is not None:
                window.designer.shutdown()
            window.deleteLater()
            _drain(2)
        except UserError as exc:
            print(f"scheduler-gui: {exc}", file=sys.stderr)
            return 1
        finally:
            ctx.close()
    if not ok:
        print(f"scheduler-gui: --screenshot {path}: the image could not be written", file=sys.stderr)
        return 1
    return 0
