"""The first run: a ledger with no schedules gets the demo schedules, so that
``make run`` shows the engine at work (two demos break on purpose: one fails,
one hangs and lands in Needs attention).

Runs on a worker thread (the monitor opens the ledger off the GUI thread): no
widgets here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.desktop.bundled import demo_dir
from core.errors import UserError
from core.ledger.publish import RevisionSource, publish_new
from core.spec.files import load_spec

if TYPE_CHECKING:
    from scheduler_gui.context import AppContext

DEMO_DIR = demo_dir()


def demo_files(ctx: AppContext) -> list[Path]:
    """The demo specs, each taken from the workspace when a copy is there (a person
    may have edited it), else from ``resources/demo``."""
    found = []
    for bundled in sorted(DEMO_DIR.glob("*.yaml")):
        copy = ctx.workspace / bundled.name
        found.append(copy if copy.is_file() else bundled)
    return found


def seed_demo_ledger(ctx: AppContext) -> int:
    """Publish the demo schedules when the ledger holds none; returns how many were published.

    Idempotent: the check and the publishes are one write transaction
    (:func:`core.ledger.publish.publish_new`), so a
    second call (or a second window) publishes nothing. A demo that does not
    validate or cannot be published here (a program missing on this machine)
    is left out; :data:`last_skipped` says which and why.
    """
    specs = []
    skipped: list[str] = []
    for path in demo_files(ctx):
        try:
            specs.append((path, load_spec(str(path))))
        except UserError as exc:
            skipped.append(f"{path.name}: {str(exc).splitlines()[0]}")
    # Recorded like any publish from the window: the sidebar and Publish know the file.
    sources = [(spec, RevisionSource.of_file(path)) for path, spec in specs]
    seeded = publish_new(ctx.ledger, sources, ctx.clock, only_into_empty=True)
    if seeded.had_schedules:
        return 0
    last_skipped[:] = skipped + seeded.skipped
    return len(seeded.published)


#: Why demos were left out by the latest :func:`seed_demo_ledger` (for a log or a status line).
last_skipped: list[str] = []
