"""Entry point of the desktop app (``scheduler-gui``).

Flags are checked before Qt is loaded, so a mistake costs nothing and says
one line. The window is shown first; the ledger, the engine and the monitor
views follow once the event loop runs.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from core.counts import counted

_STARTED = time.perf_counter()

VIEWS = ("designer", "preview", "timeline", "whatif", "monitor", "attention", "detail", "health", "engines")
#: Pictures of one part, only with --screenshot: the designer's wake checkbox and alert routes, and
#: Engine Settings with the ledger's default alert routes.
SCENES = ("wake-alerts", "alert-settings")
#: When set, the app prints the milliseconds from import to the first shown window and exits (bench/gui_bench.py).
EXIT_AFTER_SHOW = "TIDEMARK_EXIT_AFTER_SHOW"
_SIZE = re.compile(r"^(\d{2,5})x(\d{2,5})$")


class UsageError(Exception):
    """A bad flag or path: one line for the person, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


@dataclass(frozen=True)
class Options:
    workspace: Path | None
    db: str | None
    screenshot: Path | None
    #: The view to render with --screenshot, or to open the window on (None: the designer).
    view: str | None
    spec: Path | None
    size: tuple[int, int]
    version: bool
    desktop_entry: str | None = None  # "install" or "uninstall"
    minimized: bool = False


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="scheduler-gui", description="Tidemark: design schedules and watch them run.")
    p.add_argument("--workspace", metavar="DIR", help="folder of schedule files (default: Documents/Tidemark)")
    p.add_argument("--db", metavar="URL", help="the ledger: a SQLite file or postgresql+psycopg:// URL")
    p.add_argument("--screenshot", metavar="PATH", help="render the window offscreen to a PNG and exit")
    p.add_argument(
        "--view",
        choices=VIEWS + SCENES,
        help="the view to open the window on (attention: Needs attention), or to render; "
        f"with --screenshot also {' or '.join(SCENES)}",
    )
    p.add_argument("--spec", metavar="FILE", help="the schedule file to open")
    p.add_argument("--size", metavar="WxH", help="window size for --screenshot (default 1280x800)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    p.add_argument(
        "--minimized",
        action="store_true",
        help="start with the engine running and the window hidden in the tray (minimized where there is no tray): "
        "how the session starts it",
    )
    entry = p.add_mutually_exclusive_group()
    entry.add_argument(
        "--install-desktop-entry",
        dest="desktop_entry",
        action="store_const",
        const="install",
        help="add Tidemark to the applications menu (under $XDG_DATA_HOME) and exit",
    )
    entry.add_argument(
        "--uninstall-desktop-entry",
        dest="desktop_entry",
        action="store_const",
        const="uninstall",
        help="remove what --install-desktop-entry wrote and exit",
    )
    return p


def parse_args(argv: list[str]) -> Options:
    """The options, or :class:`UsageError` naming the flag that is wrong."""
    ns = _parser().parse_args(argv)
    workspace = Path(ns.workspace).expanduser() if ns.workspace is not None else None
    if workspace is not None and workspace.exists() and not workspace.is_dir():
        raise UsageError(f"--workspace {ns.workspace}: is a file, not a folder")
    spec = Path(ns.spec).expanduser() if ns.spec is not None else None
    if spec is not None:
        _check_spec(spec, ns.spec)
    size_text = ns.size or "1280x800"
    match = _SIZE.match(size_text)
    if not match:
        raise UsageError(f"--size {ns.size}: expected WIDTHxHEIGHT, e.g. 1280x800")
    size = (int(match.group(1)), int(match.group(2)))
    if not (320 <= size[0] <= 7680 and 240 <= size[1] <= 4320):
        raise UsageError(f"--size {ns.size}: between 320x240 and 7680x4320")
    shot = Path(ns.screenshot).expanduser() if ns.screenshot is not None else None
    if shot is not None:
        if shot.suffix.lower() != ".png":
            raise UsageError(f"--screenshot {ns.screenshot}: the file name must end in .png")
        if not shot.parent.resolve().is_dir():
            raise UsageError(f"--screenshot {ns.screenshot}: the folder {shot.parent} does not exist")
        if ns.minimized:
            raise UsageError("--minimized does not go with --screenshot")
    elif ns.size is not None:
        raise UsageError("--size goes with --screenshot")
    elif ns.view in SCENES:
        raise UsageError(f"--view {ns.view} goes with --screenshot (it is a picture, not a view to open on)")
    db = ns.db if ns.db is not None else os.environ.get("SCHEDULER_DB_URL") or None
    if db is not None:
        _check_db(db, "--db" if ns.db is not None else "SCHEDULER_DB_URL")
    view = ns.view or ("designer" if shot is not None else None)
    return Options(workspace, db, shot, view, spec, size, ns.version, ns.desktop_entry, ns.minimized)


def _check_spec(spec: Path, given: str) -> None:
    """A spec file that cannot be read is a bad flag; one that reads but is invalid opens, to be fixed."""
    if not spec.is_file():
        raise UsageError(f"--spec {given}: {'is a folder' if spec.is_dir() else 'no such file'}")
    from core.errors import UserError
    from core.spec.files import load_text, read_spec_text

    try:
        data = load_text(read_spec_text(spec), given)
    except UserError as exc:
        raise UsageError(f"--spec {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--spec {given}: a spec is a mapping of keys to values")


def _check_db(url: str, flag: str) -> None:
    """Catch a malformed URL now; a ledger that is locked or unreachable is shown in the window."""
    text = url.strip()
    if not text:
        raise UsageError(f"{flag}: empty; give a SQLite file or a postgresql+psycopg:// URL")
    if "://" not in text:
        if Path(text).expanduser().is_dir():
            raise UsageError(f"{flag} {url}: is a folder; give the ledger's file, e.g. {text.rstrip('/')}/ledger.db")
        return
    from core.errors import LedgerError
    from core.ledger.db import check_url

    try:
        check_url(text)
    except LedgerError as exc:
        raise UsageError(f"{flag} {exc}") from None


def _version() -> str:
    from scheduler_gui import version

    return version()


def build_application(argv0: str = "scheduler-gui") -> object:
    """The QApplication with Tidemark's name, icon and style (the one already running, if any)."""
    from PySide6.QtWidgets import QApplication

    from core.desktop.entry import APP_ID
    from scheduler_gui.context import APPLICATION, ORGANIZATION
    from scheduler_gui.icons import app_icon
    from scheduler_gui.main_thread_gc import collect_on_this_thread

    app = QApplication.instance()
    if app is None:
        app = QApplication([argv0])
    assert isinstance(app, QApplication)
    # Workers (previews, the engine) must never be the thread that destroys a widget caught in a cycle.
    collect_on_this_thread(app)
    app.setApplicationName(APPLICATION)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationDisplayName("Tidemark")
    # No setApplicationVersion: nothing reads it, and package metadata costs start-up time.
    app.setDesktopFileName(APP_ID)  # the .desktop file --install-desktop-entry writes
    app.setWindowIcon(app_icon())
    # Without a desktop theme the built-in look is dated; Fusion follows the system's light or dark scheme.
    if app.style().name().lower() in ("windows", ""):
        app.setStyle("Fusion")
    return app


def _print_time_to_show() -> None:
    elapsed = (time.perf_counter() - _STARTED) * 1000
    print(f"shown {elapsed:.1f} ms", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        opts = parse_args(args)
    except UsageError as exc:
        print(f"scheduler-gui: {exc}", file=sys.stderr)
        return 2
    if opts.version:
        from core.time.zones import tzdb_version

        print(f"scheduler-gui {_version()} (tzdata {tzdb_version()})")
        return 0
    if opts.desktop_entry is not None:
        return _desktop_entry(opts.desktop_entry)
    if opts.screenshot is not None:
        from scheduler_gui.screenshot import take_screenshot

        return take_screenshot(opts.screenshot, opts.view or "designer", opts.spec, opts.size)
    missing = missing_display(os.environ, sys.platform)
    if missing:
        print(f"scheduler-gui: {missing}", file=sys.stderr)
        return 1
    return _run(opts)


def _desktop_entry(what: str) -> int:
    from core.desktop.entry import DesktopEntryError
    from scheduler_gui.desktop.install import install_desktop_entry, uninstall_desktop_entry

    try:
        if what == "install":
            written = install_desktop_entry(os.environ)
            print(f"Added Tidemark to the applications menu ({counted(len(written), 'file')}, launcher {written[0]})")
        else:
            removed = uninstall_desktop_entry(os.environ)
            print(f"Removed Tidemark from the applications menu ({counted(len(removed), 'file')})")
    except DesktopEntryError as exc:
        print(f"scheduler-gui: {exc}", file=sys.stderr)
        return 2
    return 0


def missing_display(env: Mapping[str, str], platform: str) -> str | None:
    """Why the window cannot be shown here, or None. Qt itself would abort without a word a person can use."""
    if not platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set). "
        "Start it from a desktop session, or render a view to a file with --screenshot PATH."
    )


def _run(opts: Options) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = build_application()
    assert isinstance(app, QApplication)
    from core.errors import UserError
    from scheduler_gui.context import AppContext, default_workspace
    from scheduler_gui.main_window import MainWindow
    from scheduler_gui.workspace.folder import seed_workspace
    from scheduler_gui.workspace.session_guard import BEAT_EVERY

    workspace = opts.workspace or default_workspace()
    try:
        seeded = bool(seed_workspace(workspace))
    except OSError as exc:
        print(f"scheduler-gui: --workspace {workspace}: cannot be used ({exc.strerror})", file=sys.stderr)
        return 2
    ctx = AppContext(workspace=workspace.resolve(), ledger_url=opts.db)
    guard, unclean = _guard_session(ctx)
    window = MainWindow(ctx)
    first_run = ctx.settings.value("app/seeded") in (None, "", False, "false")
    try:
        window.open_initial(opts.spec)
    except UserError as exc:
        print(f"scheduler-gui: {exc}", file=sys.stderr)
        guard.end()
        return 2
    if os.environ.get(EXIT_AFTER_SHOW):
        window.show()
        app.processEvents()  # the first paint
        _print_time_to_show()
        guard.end()
        return 0
    show_first(window, opts)
    # The window's close button may hide it in the tray: the app ends when the window closes for good.
    app.setQuitOnLastWindowClosed(False)
    window.closed.connect(app.quit)

    def after_first_paint() -> None:
        # Started by the session ("Start with My Session"), the app is there to run its engine.
        window.start_monitor(seed=seeded or first_run, start_engine=opts.minimized or window.engine_autostart)
        if opts.view is not None:
            window.show_view(opts.view)
        ctx.settings.setValue("app/seeded", True)
        window.offer_recovery()
        if unclean:
            _report_crash_when_ready(ctx, window, unclean)

    QTimer.singleShot(0, after_first_paint)
    beat = QTimer()
    beat.timeout.connect(guard.beat)
    beat.start(int(BEAT_EVERY.total_seconds() * 1000))
    # Ctrl+C in the terminal (or a polite kill) closes the window the ordinary way, with its questions.
    # (Quit, not the close button: a window hidden in the tray must not just hide again.)
    signal.signal(signal.SIGINT, lambda *_: QTimer.singleShot(0, window.quit))
    signal.signal(signal.SIGTERM, lambda *_: QTimer.singleShot(0, window.quit))
    wake = QTimer()
    wake.timeout.connect(lambda: None)  # Python runs signal handlers only between calls into it
    wake.start(300)
    try:
        status = app.exec()
    finally:
        ctx.close()
    guard.end()  # a clean quit: the next start reports nothing
    return status


def show_first(window: Any, opts: Options) -> None:
    """Show the window, or with ``--minimized`` leave it hidden in the tray (minimized where there is no tray)."""
    if not opts.minimized:
        window.show()
    elif not window.tray.available:
        window.showMinimized()


def _guard_session(ctx: Any) -> tuple[Any, list[Any]]:
    """This session's marker and crash log in the data folder, and the sessions that died before it."""
    from scheduler_gui.workspace.session_guard import SessionGuard, data_folder

    guard = SessionGuard(data_folder(), ctx.clock)
    try:
        unclean = guard.begin()
        guard.record_crashes()
    except OSError as exc:  # a data folder that cannot be written costs the crash report, not the window
        print(f"scheduler-gui: no crash log in {data_folder()} ({exc.strerror})", file=sys.stderr)
        unclean = []
    return guard, unclean


def _report_crash_when_ready(ctx: Any, window: Any, unclean: list[Any]) -> None:
    """Show the crash report once the ledger is open (the attempts come from it)."""
    from scheduler_gui.monitor.crash_report import CrashReport
    from scheduler_gui.monitor.states import HubState

    def show() -> None:
        if getattr(window, "crash_report", None) is None:  # once, whether the ledger opened or failed first
            window.crash_report = CrashReport(ctx, unclean, window, window.hub.watcher)
            window.crash_report.open()

    if window.hub.state is HubState.OPEN:
        show()
    else:
        window.hub.ledgerReady.connect(show)
        window.hub.ledgerFailed.connect(lambda _message: show())


if __name__ == "__main__":
    raise SystemExit(main())
