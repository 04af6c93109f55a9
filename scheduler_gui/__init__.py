"""Tidemark's desktop window (PySide6). ``core`` never imports this package.

Its root holds the application (app, main_window, status_bar, screenshot),
which may import every part, and what every part shares (context, actions,
icons, a11y, undo, …), which imports no part. The parts, designer/, monitor/,
preview/, workspace/ and desktop/, use each other's widgets. Nothing here
imports core/cli/ (docs/architecture.md).
"""

from __future__ import annotations

from functools import cache


@cache
def version() -> str:
    """The installed version (read when first asked: reading package metadata costs start-up time)."""
    from importlib import metadata

    try:
        return metadata.version("tidemark")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+source"
