"""``schedctl engine run`` catches SIGINT and SIGTERM from before its engine announces itself
(core.cli.engine_commands.StopOnSignal): a signal in its first moments is a clean stop, kept
until the engine exists, never a kill that leaves the engine's row live."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest

from core.cli.engine_commands import StopOnSignal


class FakeEngine:
    def __init__(self) -> None:
        self.stopped = 0
        self.interrupted = 0

    def stop(self) -> None:
        self.stopped += 1

    def interrupt(self) -> None:
        self.interrupted += 1


def engine() -> Any:
    return FakeEngine()


def test_a_signal_before_the_engine_exists_stops_it_once_attached(capfd: pytest.CaptureFixture[str]) -> None:
    stopping = StopOnSignal()
    stopping.on_signal(signal.SIGTERM, None)
    fake = engine()
    stopping.attach(fake)
    assert (fake.stopped, fake.interrupted) == (1, 0)
    assert not stopping.interrupted
    assert "the engine stops as soon as it has started" in capfd.readouterr().out


def test_a_second_signal_while_starting_interrupts_the_start() -> None:
    stopping = StopOnSignal()
    stopping.on_signal(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        stopping.on_signal(signal.SIGINT, None)


def test_no_signal_leaves_the_engine_running() -> None:
    stopping = StopOnSignal()
    fake = engine()
    stopping.attach(fake)
    assert (fake.stopped, fake.interrupted) == (0, 0)


def test_signals_after_attach_stop_then_interrupt(capfd: pytest.CaptureFixture[str]) -> None:
    stopping = StopOnSignal()
    fake = engine()
    stopping.attach(fake)
    stopping.on_signal(signal.SIGTERM, None)
    stopping.on_signal(signal.SIGTERM, None)
    for thread in threading.enumerate():
        if thread.name in ("tidemark-stop", "tidemark-interrupt"):
            thread.join(5)
    assert (fake.stopped, fake.interrupted) == (1, 1)
    assert stopping.interrupted
    captured = capfd.readouterr()
    assert "no new task starts" in captured.out and "interrupted" in captured.err


def test_install_and_uninstall_restore_the_handlers_there_were() -> None:
    before = signal.getsignal(signal.SIGTERM)
    stopping = StopOnSignal().install()
    assert signal.getsignal(signal.SIGTERM) == stopping.on_signal
    stopping.uninstall()
    assert signal.getsignal(signal.SIGTERM) == before
