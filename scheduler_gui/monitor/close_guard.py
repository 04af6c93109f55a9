"""Closing the window while the embedded engine runs tasks: ask what to do.

Three answers, and Cancel:

* **Keep running headless** (``detach``): the tasks finish and are recorded,
  nothing new is claimed, and the engine service takes over the ledger. When
  the service is not installed the dialog offers to install it (``schedctl
  engine install-service``); where systemd is missing it says so and shows the
  command to run instead.
* **Wait for them** (``wait``): the window waits, showing progress.
* **Stop them and record** (``stop``): the tasks are stopped; the engine records
  them as lost and its rules decide (a retry, or unknown effect).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from scheduler_gui.a11y import accessible, plain_text
from scheduler_gui.monitor.schedule_actions import error_label
from scheduler_gui.monitor.states import ShutdownMode

if TYPE_CHECKING:
    from core.desktop.service_command import ServiceResult


def _default_installer(db: str | None, options: Sequence[str] = ()) -> ServiceResult:
    from core.desktop.service import install_service

    return install_service(db, options=options)


def _engine_options(host: Any) -> list[str]:
    """The window's engine's labels and trusted users (Engine Settings), and ``--no-notify``
    when the person turned notifications off there, for the service that takes over from it;
    none when they cannot be read (the engine says why when it starts)."""
    from core.desktop.service import team_options
    from core.errors import UserError
    from scheduler_gui.monitor.engine_settings import read_settings
    from scheduler_gui.monitor.tray import notify_on

    settings = getattr(getattr(host, "ctx", None), "settings", None)
    if settings is None:
        return []
    try:
        stored = read_settings(settings)
    except UserError:
        return []
    return team_options(labels=stored.labels.items(), trusts=stored.trusts, notify=notify_on(settings))


def _default_installed() -> bool:
    from core.desktop.service import service_installed

    return service_installed()


class CloseGuardDialog(QDialog):
    """The question, with one button per answer; :attr:`choice` holds the answer (None: cancelled)."""

    def __init__(
        self,
        host: Any,
        parent: QWidget | None = None,
        *,
        installer: Callable[[str | None, Sequence[str]], ServiceResult] = _default_installer,
        installed: Callable[[], bool] = _default_installed,
    ) -> None:
        super().__init__(parent)
        self.host = host
        self.installer = installer
        self.service_installed = installed()
        self.choice: ShutdownMode | None = None
        self.setWindowTitle("Tasks are running")
        self.setAccessibleName("Tasks are running")
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        count = int(getattr(host, "tasks_running", 0))
        noun = "task is" if count == 1 else "tasks are"
        intro = QLabel(
            f"<b>{count} {noun} still running.</b><br>"
            "The embedded engine stops with the window. What should happen to the running tasks?"
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        self.detach_button = QPushButton("&Keep running headless")
        if self.service_installed:
            detach_tip = "Let the tasks finish and hand the ledger to the installed engine service"
        else:
            detach_tip = "Let the tasks finish; the engine service (systemd; launchd on macOS) keeps schedules running"
        self.wait_button = QPushButton("&Wait for them")
        self.stop_button = QPushButton("&Stop them and record")
        self.cancel_button = QPushButton("Cancel")
        for button, tip in (
            (self.detach_button, detach_tip),
            (self.wait_button, "Close once the running tasks have finished and been recorded"),
            (
                self.stop_button,
                "Stop the tasks now; they are recorded as cut short and the schedule's rules decide "
                "(a retry, or a decision for a person when the effect is unknown)",
            ),
            (self.cancel_button, "Keep the window open"),
        ):
            accessible(button, plain_text(button.text()), tip)

        self.install_box = QCheckBox("Install the engine service so schedules keep running without the window")
        accessible(
            self.install_box,
            plain_text(self.install_box.text()),
            "Runs schedctl engine install-service: a systemd user service (a launchd agent on macOS) for this ledger",
        )
        self.install_box.setChecked(True)
        self.install_box.setVisible(not self.service_installed)
        layout.addWidget(self.detach_button)
        indented = QHBoxLayout()  # the offer belongs to "Keep running headless": set under it
        indented.setContentsMargins(24, 0, 0, 8)
        indented.addWidget(self.install_box)
        layout.addLayout(indented)
        layout.addWidget(self.wait_button)
        layout.addWidget(self.stop_button)
        self.problem = error_label()
        layout.addWidget(self.problem)
        self.instead = QLineEdit()
        self.instead.setReadOnly(True)
        accessible(
            self.instead, "Command to run instead", "Run this in a terminal to keep the engine running without systemd"
        )
        self.instead.hide()
        layout.addWidget(self.instead)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)

        self.detach_button.clicked.connect(lambda: self.choose(ShutdownMode.DETACH))
        self.wait_button.clicked.connect(lambda: self.choose(ShutdownMode.WAIT))
        self.stop_button.clicked.connect(lambda: self.choose(ShutdownMode.STOP))
        self.cancel_button.clicked.connect(self.reject)
        self.wait_button.setDefault(True)

    def choose(self, mode: ShutdownMode) -> None:
        """The accept path of each answer."""
        if mode == ShutdownMode.DETACH and not self.service_installed and self.install_box.isChecked():
            ctx = getattr(self.host, "ctx", None)
            result = self.installer(getattr(ctx, "ledger_url", None), _engine_options(self.host))
            if not result.ok:
                self.problem.setText(" ".join(result.lines))
                self.problem.show()
                if result.instead:
                    self.instead.setText(result.instead)
                    self.instead.show()
                    self.instead.selectAll()
                return
            self.service_installed = True
        self.choice = mode
        self.accept()


def ask_on_close(host: Any, parent: QWidget | None = None) -> ShutdownMode | None:
    """``detach``, ``wait`` or ``stop``; None to keep the window open. Asks only when tasks run."""
    if not int(getattr(host, "tasks_running", 0)):
        return ShutdownMode.STOP
    dialog = CloseGuardDialog(host, parent)
    dialog.exec()
    return dialog.choice
