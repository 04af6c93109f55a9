"""The benchmarks under bench/ keep working: each answers ``--help`` without starting, each runs
at a tiny size, and ``make bench`` (or ``make bench-gui``) runs every one of them. The figures are
not checked here (they are measured by hand, docs/benchmarks.md); a bench that no longer runs is."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
#: Modules the benches import, not benches themselves (team_bench runs under engine_bench.py --pg).
HELPERS = {"benchkit.py", "team_bench.py"}
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in HELPERS)
DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"

#: Each bench at a tiny size, and a line its output must hold. bench/window_stress.py runs in
#: tests/gui/test_window_stress.py (a few seconds of the whole window), not again here.
TINY: dict[str, tuple[list[str], str]] = {
    "alerts_bench.py": (["--quick"], "ratio outbox / baseline"),
    "apply_bench.py": (["--quick"], "one apply per file"),
    "count_bench.py": (["--quick"], "one minute later"),
    "pass_bench.py": (["--quick"], "KiB"),
    "pg_floor_bench.py": (["--quick"], "median: floor 4 / 1"),
    "engine_bench.py": (["--quick"], "ratio engine `true` / direct spawn"),
    "gui_bench.py": (["--quick"], "launch → first shown window"),
    "job_cost_bench.py": (["--quick"], "ms of CPU per job"),
    "materialize_bench.py": (["--quick"], "ratio materialize / baseline"),
    "monitor_bench.py": (["--quick"], "filter: manual runs"),
    "preview_bench.py": (["--quick"], "every minute of 1 January 2026 in Europe/Berlin"),
    "recovery_bench.py": (["--quick"], "executions"),
    "scale_bench.py": (["--quick"], "ratio to target"),
    "spawn_bench.py": (["--count", "5", "--rounds", "1", "--burst", "4", "--threads", "2"], "run_claim"),
}


def _run(args: list[str], tmp_path: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False
    )


def _pg_url() -> str | None:
    """The test server's URL, or None when there is none (a failure when one is required)."""
    url = os.environ.get("TIDEMARK_TEST_PG_URL") or DEFAULT_PG_URL
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        if os.environ.get("TIDEMARK_REQUIRE_PG"):
            pytest.fail(f"TIDEMARK_REQUIRE_PG is set but there is no PostgreSQL at {url} ({exc})")
        return None
    finally:
        engine.dispose()
    return url


def test_every_bench_has_a_tiny_run_or_its_own_test() -> None:
    assert sorted([*TINY, "window_stress.py"]) == SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_answers_without_starting(script: str, tmp_path: Path) -> None:
    done = _run([str(BENCH / script), "--help"], tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: "), done.stdout
    assert list(tmp_path.iterdir()) == []  # no ledger, no temporary folder: nothing started


@pytest.mark.parametrize("script", sorted(TINY))
def test_a_tiny_run_completes(script: str, tmp_path: Path) -> None:
    args, expected = TINY[script]
    if script == "scale_bench.py":
        url = _pg_url()
        args = [*args, "--backend", "both", "--pg", url] if url else [*args, "--backend", "sqlite"]
    if script == "pg_floor_bench.py":  # PostgreSQL's floor only: skipped without a server
        url = _pg_url()
        if url is None:
            pytest.skip("no PostgreSQL server")
        args = [*args, "--pg", url]
    done = _run([str(BENCH / script), *args], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert expected in done.stdout, done.stdout
    assert "Traceback" not in done.stderr, done.stderr


def test_make_bench_runs_every_bench() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = re.findall(r"^(bench(?:-gui)?):.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    named = set(re.findall(r"bench/(\w+\.py)", "".join(body for _, body in targets)))
    assert named == set(SCRIPTS)
