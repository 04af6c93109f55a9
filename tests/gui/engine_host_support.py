"""The window's engine on the test context, polling fast, stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler_gui.context import AppContext
from scheduler_gui.monitor.engine_host import EngineHost


@pytest.fixture(name="host")
def host_fixture(ctx: AppContext, qtbot: Any) -> Iterator[EngineHost]:
    made = EngineHost(ctx, poll_seconds=0.05)
    yield made
    made.shutdown("stop")
