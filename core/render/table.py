"""Preview rows as a table for people: local time first, the instant in UTC, the
offset, a status with an icon, and the reason. Clock changes are drawn as
separator lines between the rows they fall between.
"""

from __future__ import annotations

import bisect
import functools
import io
import itertools
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, TextIO

from core.enums import Status
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, wake_words
from core.render.terminal import terminal_safe
from core.time.durations import human_duration
from core.time.formats import fmt_clock
from core.time.zones import Transition, format_offset, get_zone

if TYPE_CHECKING:
    from core.render.source import Source

HEADERS = ("Local", "UTC", "Offset", "Status", "Why")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_NONE = "—"

# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies),
# as the nearest xterm-256 entries; skipped rows are dimmed grey instead.
_ORANGE = "\x1b[38;5;214m"
_BLUE = "\x1b[38;5;25m"
_GREY = "\x1b[2;37m"
_RESET = "\x1b[0m"

_WORDS = {
    Status.SCHEDULED: ("✓", "scheduled"),
    Status.SHIFTED: ("↷", "shifted"),
    Status.SKIPPED_GAP: ("⊘", "skipped (gap)"),
    Status.SKIPPED_FOLD: ("⊘", "skipped (fold)"),
    Status.SKIPPED_DUPLICATE: ("⊘", "duplicate"),
    Status.EXCLUDED: ("⊘", "excluded"),
}
_SECOND_READING = "②"
_ASCII = str.maketrans({"✓": "+", "↷": ">", "⊘": "-", "②": "2", "─": "-", "—": "-", "→": ">", "·": "|"})


def status_text(row: Occurrence) -> str:
    """``✓ scheduled``, ``↷ shifted``, ``⊘ skipped (gap)``; ``②`` marks the second reading of a fold."""
    icon, word = _WORDS[row.status]
    if row.fold_ordinal == 1 and row.runnable:
        icon = _SECOND_READING
    return f"{icon} {word}"


def _colour(row: Occurrence) -> str | None:
    if not row.runnable:
        return _GREY
    if row.status is Status.SHIFTED:
        return _ORANGE
    if row.fold_ordinal == 1:
        return _BLUE
    return None


def _day_and_clock(dt: datetime, text: str | None = None) -> str:
    """``2026-03-08 02:30`` (``02:30:15`` when seconds matter), as ``%Y-%m-%d`` and :func:`fmt_clock`
    write it; sliced from the ISO text (``text`` when the row already holds it), which costs no
    strftime, from year 1000 on."""
    if dt.year < 1000:  # strftime writes such years with fewer digits
        return f"{dt:%Y-%m-%d} {fmt_clock(dt)}"
    if text is None:
        text = dt.isoformat()
    return f"{text[:10]} {text[11:19] if dt.second else text[11:16]}"


def _when(local: datetime, text: str | None = None) -> str:
    return f"{_WEEKDAYS[local.weekday()]} {_day_and_clock(local, text)}"


def _utc(instant: datetime, text: str | None = None) -> str:
    return f"{_day_and_clock(instant, text)}Z"


def zone_label(abbr: str | None, offset: timedelta, other: str | None = None) -> str:
    """An abbreviation such as EST, or ``UTC+10:30`` when the zone data only has a number."""
    if not abbr or abbr[0] in "+-" or abbr == other:
        return "UTC" + format_offset(offset)
    return abbr


def transition_line(tr: Transition) -> str:
    """``── clocks jump forward 1 h · 2026-03-08 07:00Z · EST→EDT ──``."""
    motion = "jump forward" if tr.kind == "gap" else "fall back"
    before = zone_label(tr.abbr_before, tr.offset_before, tr.abbr_after)
    after = zone_label(tr.abbr_after, tr.offset_after, tr.abbr_before)
    return f"── clocks {motion} {human_duration(tr.delta)} · {_utc(tr.utc)} · {before}→{after} ──"


def _cells(
    row: Occurrence,
    label: Callable[[str | None, timedelta], str] = zone_label,
    wake_zone: tzinfo | None = None,
) -> tuple[str, str, str, str, str]:
    # A SCHEDULED row runs at its nominal wall time, whose text the row holds, as it holds the instant's.
    scheduled = row.status is Status.SCHEDULED
    resolved, shift, text = row.resolved, row.offset, row.resolved_utc
    if scheduled and resolved is not None and shift is not None and not row.dispatch_delay and wake_zone is None:
        # The common row, its cells written at once: what the general way below writes for it.
        nominal = row.nominal
        when = f"{_WEEKDAYS[nominal.weekday()]} {_day_and_clock(nominal, row.nominal_local)}"
        zone = label(row.abbreviation, shift)
        return (
            f"{when} {zone}",
            f"{_day_and_clock(resolved, text)}Z",
            format_offset(shift),
            status_text(row),
            row.reason or "",
        )
    local = row.nominal if scheduled else row.resolved_local
    if row.runnable and local is not None and row.resolved is not None and row.offset is not None:
        when = f"{_when(local, row.nominal_local if scheduled else None)} {label(row.abbreviation, row.offset)}"
        utc, offset = _utc(row.resolved, row.resolved_utc), format_offset(row.offset)
    else:
        # Nothing runs: show the wall time the rule named. A skipped fold reading
        # keeps its abbreviation, which tells the two readings apart.
        when = _when(row.nominal)
        if row.status is Status.SKIPPED_FOLD and row.offset is not None:
            when += f" {label(row.abbreviation, row.offset)}"
        utc = offset = _NONE
    why = row.reason or ""
    if row.dispatch_delay:
        delay = human_duration(timedelta(seconds=row.dispatch_delay))
        why = f"{why}; dispatched {delay} later (jitter)" if why else f"dispatched {delay} later (jitter)"
    wakes = wake_words(row, wake_zone) if wake_zone is not None else None
    if wakes is not None:
        why = f"{why}; {wakes}" if why else wakes
    return when, utc, offset, status_text(row), why


@functools.lru_cache(maxsize=256)
def _safe_label(abbr: str | None, offset: timedelta) -> str:
    """:func:`zone_label` made terminal-safe, once per abbreviation and offset."""
    return terminal_safe(zone_label(abbr, offset))


def _safe_cells(row: Occurrence, wake_zone: tzinfo | None = None) -> tuple[str, str, str, str, str]:
    """:func:`_cells` with nothing that drives a terminal: only the zone's abbreviation in the local
    time and the reason can hold one; dates, clocks, instants, offsets and status words cannot.
    With ``wake_zone`` (a ``wakeSystem`` spec's zone) the Why column says when the machine wakes."""
    when, utc, offset, status, why = _cells(row, _safe_label, wake_zone)
    return when, utc, offset, status, terminal_safe(why) if why else why


@functools.lru_cache(maxsize=256)
def _zone_cells(abbr: str | None, offset: timedelta) -> tuple[str, str]:
    """A row's terminal-safe zone label and its offset text, once per abbreviation and offset."""
    return _safe_label(abbr, offset), format_offset(offset)


_SCHEDULED = Status.SCHEDULED
_SCHEDULED_TEXT = "✓ scheduled"


def _table_cells(row: Occurrence, wake_zone: tzinfo | None) -> tuple[str, str, str, str, str]:
    """:func:`_safe_cells`; the common row (SCHEDULED, no reason, whole minutes from year 1000 on)
    is sliced from the texts it holds in one step, its zone's cells made once per zone."""
    text, offset, local = row.resolved_utc, row.offset, row.nominal_local
    if (
        row.status is _SCHEDULED
        and row.reason is None
        and not row.fold_ordinal
        and not row.dispatch_delay
        and wake_zone is None
        and text is not None
        and offset is not None
        and local[0] != "0"
        and local.endswith(":00")
        and text[0] != "0"
        and text.endswith(":00Z")
    ):
        label, offset_text = _zone_cells(row.abbreviation, offset)
        when = local[:16].replace("T", " ")
        utc = text[:16].replace("T", " ")
        return f"{_WEEKDAYS[row.nominal.weekday()]} {when} {label}", utc + "Z", offset_text, _SCHEDULED_TEXT, ""
    return _safe_cells(row, wake_zone)


def _line(cells: Sequence[str], widths: Sequence[int], colour: str | None) -> str:
    padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths, strict=True)]
    if colour is not None:
        padded[3] = f"{colour}{padded[3]}{_RESET}"
    return "  ".join([*padded, cells[-1]]).rstrip()


def _line_format(widths: Sequence[int], colour: str | None) -> str:
    """A format that writes cells as :func:`_line` does (before its ``rstrip``), padded in one C call."""
    w0, w1, w2, w3 = widths
    status = f"{{:<{w3}}}" if colour is None else f"{colour}{{:<{w3}}}{_RESET}"
    return f"{{:<{w0}}}  {{:<{w1}}}  {{:<{w2}}}  {status}  {{}}"


def _block_lines(
    cells: Sequence[Sequence[str]], colours: Sequence[str | None] | None, widths: Sequence[int]
) -> list[str]:
    """The lines of rows in a block, padded to the block's ``widths``; ``colours``, when given, each row's."""
    if colours is None:
        return [line.rstrip() for line in itertools.starmap(_line_format(widths, None).format, cells)]
    formats = {colour: _line_format(widths, colour) for colour in set(colours)}
    return [formats[colour].format(*row).rstrip() for colour, row in zip(colours, cells, strict=True)]


#: Rows laid out together: column widths are those of their block, so a long
#: preview is written block by block instead of being held whole.
BLOCK = 1000


def write_table(source: Source, file: TextIO, *, color: bool = False, unicode: bool = True) -> None:
    """The table, block by block, ending in a newline. ``color`` adds ANSI colours to the status words;
    everything else is terminal-safe (:func:`~core.render.terminal.terminal_safe`)."""
    spec = source.spec
    name = f"{spec.title} · " if spec.title else ""
    title = terminal_safe(
        f"{name}{spec.schedule_id} revision {spec.revision} · {spec.time_zone} · tzdb {source.tzdb_version}"
    )

    def emit(lines: list[str]) -> None:
        text = "\n".join(lines) + "\n"
        file.write(text if unicode else text.translate(_ASCII))

    rows = iter(source.rows)
    lo: datetime | None = None
    first = True
    wake_zone = get_zone(spec.time_zone) if spec.wake_system else None
    # A block holds what its lines need, not the rows: a row is let go as soon as its cells are made.
    while block := list(itertools.islice(rows, BLOCK)):
        positions = [row.position for row in block]
        colours = [_colour(row) for row in block] if color else None
        cells = [_table_cells(row, wake_zone) for row in block]
        del block
        columns = list(zip(*cells, strict=True))[:-1]
        widths = [max(len(header), *map(len, column)) for header, column in zip(HEADERS, columns, strict=False)]
        lines = [title, _line(HEADERS, widths, None)] if first else []
        first = False
        hi = positions[-1] + timedelta(seconds=1)
        pending = sorted(source.transitions_in(positions[0] if lo is None else lo, hi), key=lambda t: t.utc)
        lo = hi
        done = 0
        # A clock change goes before the first row at or after it.
        for end in [*(bisect.bisect_left(positions, tr.utc) for tr in pending), len(positions)]:
            lines.extend(_block_lines(cells[done:end], colours[done:end] if colours else None, widths))
            done = end
            if pending:
                lines.append(terminal_safe(transition_line(pending.pop(0))))
        emit(lines)
    if first:
        emit([title, _line(HEADERS, [len(h) for h in HEADERS[:-1]], None), "No occurrences in this range."])


def render_table(preview: Preview, *, color: bool = False, unicode: bool = True) -> str:
    """:func:`write_table` as a string."""
    buf = io.StringIO()
    write_table(preview, buf, color=color, unicode=unicode)
    return buf.getvalue()
