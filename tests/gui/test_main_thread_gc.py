"""Garbage cycles are collected on the GUI thread only: a worker that allocates
never becomes the thread that destroys a widget caught in a cycle."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtWidgets import QWidget

from scheduler_gui.main_thread_gc import MainThreadCollector


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_worker_allocating_past_the_threshold_collects_nothing(qapp, qtbot) -> None:
    collector = MainThreadCollector(interval_ms=10)
    collector.start()
    collected_on: list[int] = []

    def note(phase: str, _info: dict) -> None:
        if phase == "start":
            collected_on.append(threading.get_ident())

    gc.callbacks.append(note)
    try:
        # A widget caught in a cycle, as a closed page's leftovers are.
        widget = QWidget()
        widget.cycle = widget  # type: ignore[attr-defined]
        gone = weakref.ref(widget)
        del widget

        def allocate() -> None:
            for _ in range(50_000):
                _Cycle()

        worker = threading.Thread(target=allocate)
        worker.start()
        worker.join()
        assert gone() is not None, "the worker's allocations collected the cycle on the worker"
        assert threading.main_thread().ident is not None
        assert all(ident == threading.main_thread().ident for ident in collected_on)
        # The GUI thread's timer collects it, on the GUI thread.
        qtbot.waitUntil(lambda: gone() is None, timeout=5000)
        assert collected_on and set(collected_on) == {threading.main_thread().ident}
    finally:
        gc.callbacks.remove(note)
        collector.stop()


def test_stop_gives_collection_back_to_python(qapp) -> None:
    was = gc.isenabled()
    gc.enable()
    collector = MainThreadCollector()
    collector.start()
    assert not gc.isenabled() and collector.active
    collector.stop()
    assert gc.isenabled() and not collector.active
    if not was:
        gc.disable()


def test_nothing_is_collected_before_the_threshold(qapp) -> None:
    collector = MainThreadCollector()
    gc.collect()
    assert collector.collect_due() == 0
