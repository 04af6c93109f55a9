"""Tidemark's desktop window (PySide6). ``core`` never imports this package."""

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
