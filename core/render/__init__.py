"""Renderers of a :class:`~core.preview.Preview`: table, json, csv and ics.

Each format lives in its own module and is imported only when asked for, so
that a front end pays for ``icalendar`` only when it writes a calendar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

    from core.preview import Preview

FORMATS = ("table", "json", "csv", "ics")


def render(
    preview: Preview, fmt: str, *, color: bool = False, unicode: bool = True, stamp: datetime | None = None
) -> str:
    """The preview as text in ``fmt`` (one of :data:`FORMATS`).

    ``color`` and ``unicode`` only affect the table. ``stamp`` (aware) is the
    instant a calendar writes as DTSTAMP, required for ``ics``: the caller's
    "now", passed in so that the same inputs give the same file.
    """
    if fmt == "table":
        from core.render.table import render_table

        return render_table(preview, color=color, unicode=unicode)
    if fmt == "json":
        from core.render.jsonfmt import render_json

        return render_json(preview)
    if fmt == "csv":
        from core.render.csvfmt import render_csv

        return render_csv(preview)
    if fmt == "ics":
        from core.render.ics import render_ics

        if stamp is None:
            raise ValueError("an ics calendar needs a stamp (the instant written as DTSTAMP)")
        return render_ics(preview, stamp=stamp)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
