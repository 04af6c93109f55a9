"""bench/window_stress.py keeps working: a short run of the whole window under bursts of
tasks ends without a crash, a Qt warning or a failed engine pass (the real run is
minutes long, by hand: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/window_stress.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "window_stress.py"


@pytest.mark.slow
def test_a_short_stress_run_of_the_window_is_clean(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "faulthandler",
            str(BENCH),
            "--minutes",
            "0.15",
            "--schedules",
            "6",
            "--burst-every",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: no crash, no Qt warning, no uncaught exception, no failed engine pass" in done.stdout
    assert " 0 attempts recorded" not in done.stdout
