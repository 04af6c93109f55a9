"""Where an export's text goes: ``--out FILE`` (whole or not at all, never over a file unless
``--overwrite``, as the import writes) or ``-``, standard output. Any ``schedctl export`` target uses it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from core.cli.common import Invalid
from core.cli.import_commands import write_new

STDOUT = "-"


def checked_out(out: str, *, overwrite: bool) -> Path | None:
    """The file ``--out`` names (None: standard output), or :class:`Invalid` saying why it cannot be written."""
    if out == STDOUT:
        return None
    path = Path(out)
    if path.is_dir():
        raise Invalid([f"{out}: is a folder; give --out a file name"])
    if not path.parent.is_dir():
        raise Invalid([f"{out}: no folder {path.parent} to write it into"])
    if os.path.lexists(path) and not overwrite:  # a dangling symlink takes the name too
        raise Invalid([f"{out}: already exists; give --overwrite, or another --out"])
    return path


def write_export(text: str, path: Path | None, *, overwrite: bool) -> None:
    """Write ``text`` to ``path`` in one step (or to standard output when ``path`` is None)."""
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        write_new(path, text, overwrite=overwrite)
    except FileExistsError:
        raise Invalid([f"{path}: appeared while exporting; nothing was written"]) from None
    except OSError as exc:
        raise Invalid([f"{path}: cannot be written ({exc.strerror})"]) from None
