"""Tidemark's desktop window (PySide6). ``core`` never imports this package."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("tidemark")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"
