"""Renderers of a :class:`~core.recurrence.preview.Preview`: table, json, csv and ics.

Each format lives in its own module and is imported only when asked for, so
that a front end pays for ``icalendar`` only when it writes a calendar.

Every format writes its rows one by one as the source yields them
(:func:`write`), so a :class:`~core.recurrence.preview.PreviewStream` of a million rows
is written in bounded memory; :func:`render` returns the same text as a string.

Around the engine (docs/architecture.md): may import core/engine/ and every package below it,
and the other packages of its layer (core/explain/, core/importing/, core/exporting/,
core/render/, core/desktop/).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from datetime import datetime

    from core.render.source import Source

FORMATS = ("table", "json", "csv", "ics")
#: The formats that show no occurrence or slot ids: their rows can be made without them.
WITHOUT_IDS = frozenset({"table"})


def needs_ids(fmt: str) -> bool:
    """Whether ``fmt`` writes the rows' ids (hand it to the expansion: ``stream_preview(..., ids=...)``)."""
    return fmt not in WITHOUT_IDS


def write(
    source: Source,
    fmt: str,
    file: TextIO,
    *,
    color: bool = False,
    unicode: bool = True,
    stamp: datetime | None = None,
    safe: bool = False,
) -> None:
    """Write ``source`` to ``file`` in ``fmt`` (one of :data:`FORMATS`), row by row.

    ``color`` and ``unicode`` only affect the table. ``stamp`` (aware) is the
    instant a calendar writes as DTSTAMP, required for ``ics``: the caller's
    "now", passed in so that the same inputs give the same file. ``safe``: the
    json and csv texts that can hold a control character (reasons, names) are
    written so that they cannot drive a terminal (the table always is); ``ics``
    leaves that to the caller's stream.
    """
    if fmt == "table":
        from core.render.table import write_table

        write_table(source, file, color=color, unicode=unicode)
    elif fmt == "json":
        from core.render.jsonfmt import write_json

        write_json(source, file, safe=safe)
    elif fmt == "csv":
        from core.render.csvfmt import write_csv

        write_csv(source, file, safe=safe)
    elif fmt == "ics":
        from core.render.ics import write_ics

        if stamp is None:
            raise ValueError("an ics calendar needs a stamp (the instant written as DTSTAMP)")
        write_ics(source, file, stamp=stamp)
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render(
    preview: Source, fmt: str, *, color: bool = False, unicode: bool = True, stamp: datetime | None = None
) -> str:
    """The preview as text in ``fmt`` (see :func:`write`)."""
    buf = io.StringIO()
    write(preview, fmt, buf, color=color, unicode=unicode, stamp=stamp)
    return buf.getvalue()
