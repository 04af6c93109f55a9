"""Publishing a team's workspace: ``schedctl apply FOLDER`` against one ``apply`` per file.

N daily specs (UTC, a no-op task) are written in ten subfolders. Measured, in
process (``core.cli.main``, no interpreter start), on a fresh SQLite ledger:
``apply FOLDER`` (every file validated, then one write transaction), the
statements it sends, and how long its write transaction holds the lock. Then
the same folder again (every spec unchanged). Baseline in the same run: one
``apply FILE`` per file into another fresh ledger, as a workspace had to be
published before.

Run by hand: ``.venv/bin/python bench/apply_bench.py [N ...] [--quick]`` (default 500 2000).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml
from sqlalchemy import event
from sqlalchemy.engine import Engine

from core import cli
from core.ledger.db import Ledger

SEEN = {"statements": 0, "longest_write": 0.0}


def _statement(*_args: Any) -> None:
    SEEN["statements"] += 1


def _write_folder(folder: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        sub = folder / f"group-{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        data = {
            "schema": "scheduleSpec.v1",
            "scheduleId": f"s-{i:05d}",
            "revision": 1,
            "timeZone": "UTC",
            "rule": "FREQ=DAILY;BYHOUR=2",
            "start": "2026-01-01T00:00:00",
            "gapPolicy": "SKIP",
            "foldPolicy": "FIRST_ONLY",
            "task": {"argv": ["/bin/true"]},
        }
        path = sub / f"s-{i:05d}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        paths.append(str(path))
    return paths


def _apply(db: str, *targets: str) -> float:
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        status = cli.main(["apply", *targets, "--db", f"sqlite:///{db}", "--now", "2026-03-01T12:00:00Z"])
    assert status == 0, status
    return time.perf_counter() - started


@contextlib.contextmanager
def _timed_writes() -> Iterator[None]:
    """Each write transaction's length, the longest kept in SEEN."""
    real = Ledger.write

    @contextlib.contextmanager
    def write(self: Ledger, *args: Any, **kwargs: Any) -> Iterator[Any]:
        started = time.perf_counter()
        with real(self, *args, **kwargs) as session:
            yield session
        SEEN["longest_write"] = max(SEEN["longest_write"], time.perf_counter() - started)

    Ledger.write = write  # type: ignore[method-assign]
    try:
        yield
    finally:
        Ledger.write = real  # type: ignore[method-assign]


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "team"
        paths = _write_folder(folder, n)
        SEEN.update(statements=0, longest_write=0.0)
        one_by_one = sum(_apply(f"{tmp}/each.db", path) for path in paths)
        each_statements = SEEN["statements"]
        SEEN.update(statements=0, longest_write=0.0)
        together = _apply(f"{tmp}/folder.db", str(folder))
        statements, longest = SEEN["statements"], SEEN["longest_write"]
        SEEN.update(statements=0, longest_write=0.0)
        again = _apply(f"{tmp}/folder.db", str(folder))
        print(
            f"{n:>6,} specs: folder {together / n * 1000:6.2f} ms/spec ({statements / n:4.1f} statements/spec, "
            f"write lock {longest * 1000:5.0f} ms); again, all unchanged {again / n * 1000:5.2f} ms/spec "
            f"({SEEN['statements']} statements); one apply per file {one_by_one / n * 1000:6.2f} ms/spec "
            f"({each_statements / n:4.1f} statements/spec); ratio {together / one_by_one:4.2f}x"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 2000], help="specs per folder (default 500 2000)")
    parser.add_argument("--quick", action="store_true", help="a folder of 10 specs: checks the bench works")
    args = parser.parse_args(argv)
    sizes = [10] if args.quick else args.sizes
    event.listen(Engine, "before_cursor_execute", _statement)
    with _timed_writes():
        for n in sizes:
            run(n)


if __name__ == "__main__":
    main()
