"""The engines a ledger has seen, as a Qt model: where each runs, its state and
when it was last seen, its OS user, labels, whom it trusts, its version, what it
runs now and which schedules it refuses, with the reason in words.

Two rows per engine: its row (one column each) and beneath it a line that the
view spans across the table, with what it runs now and what it refuses (reasons
are sentences: they need the table's whole width).

A thin adapter over :func:`core.ledger.monitor_reads.engines_seen`, read off the
GUI thread (:class:`~.ledger_table.LedgerTableModel`), again when the ledger's
events arrive, on F5 and every :data:`REFRESH_EVERY_MS` while the view is shown
(an engine's heartbeat writes no event, and "last seen" ages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from core.engine.presence import STALE_AFTER
from core.ledger.engine_queries import EngineView
from core.ledger.monitor_reads import engines_seen
from core.ledger.states import EngineKind, EnginePresence
from core.team.placement import BUILT_IN_LABELS, TRUST_ANYONE, label_text
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.ledger_table import LedgerTableModel
from scheduler_gui.monitor.timetext import age_text, nominal_text, tabular_font, utc_seconds_text
from scheduler_gui.status_style import BLUISH_GREEN, GREY, ORANGE, look

#: Read again this often while the view is shown: engines beat without writing events.
REFRESH_EVERY_MS = 10_000

EngineIdRole = Qt.ItemDataRole.UserRole + 20

COLUMNS = ("Engine", "Status", "Last seen", "OS user", "Labels", "Trusts", "Version")
_TIPS = (
    "The machine the engine runs on, and whether it is a window's engine or schedctl engine run",
    f"Live: it beat within the last {age_text(STALE_AFTER)}. Stale: it stopped beating without retiring."
    " Stopped: it retired",
    "How long ago its latest heartbeat was written (UTC in the tooltip)",
    "The OS account running it: by default it runs only what this user published",
    "The labels a schedule's runsOn must match (host and user are built in)",
    "The publishers whose schedules it runs (* for anyone)",
    "The Tidemark version it runs",
)
#: Why an engine from before ledger migration 0008 has no labels, user or trusts.
OLD_ENGINE = "an older Tidemark (no labels): runs every schedule"


@dataclass(frozen=True)
class EngineLook:
    """How one engine's status reads: a glyph and a word, and a colour that is never the only sign."""

    glyph: str
    word: str
    colour: str

    @property
    def label(self) -> str:
        return f"{self.glyph} {self.word}"


def status_look(view: EngineView) -> EngineLook:
    """``● live``, ``● live, paused``, ``○ stale`` or ``⊘ stopped``."""
    if view.state is EnginePresence.RETIRED:
        return EngineLook("⊘", "stopped", GREY)
    if not view.live:
        return EngineLook("○", "stale", ORANGE)
    if view.state is EnginePresence.PAUSED:
        return EngineLook("●", "live, paused", GREY)
    return EngineLook("●", "live", BLUISH_GREEN)


def engine_text(view: EngineView) -> str:
    """``beta · window`` or ``beta · schedctl``."""
    return f"{view.host} · {'window' if view.kind is EngineKind.APP else 'schedctl'}"


def labels_text(view: EngineView) -> str:
    """Its own labels first (``gpu=yes``), then the built-in ones; the old-engine note without any."""
    if view.labels is None:
        return OLD_ENGINE
    own = {k: v for k, v in view.labels.items() if k not in BUILT_IN_LABELS}
    built_in = {k: v for k, v in view.labels.items() if k in BUILT_IN_LABELS}
    return ", ".join(t for t in (label_text(own), label_text(built_in)) if t)


def trusts_text(view: EngineView) -> str:
    """``alice, bob``, or ``anyone (*)``."""
    if view.trusts is None:
        return "anyone (an older Tidemark)"
    if TRUST_ANYONE in view.trusts:
        return "anyone (*)"
    return ", ".join(sorted(view.trusts)) or "—"


def running_text(view: EngineView) -> str:
    """``Runs now: ▶ backup 2027-03-01 07:05, ▶ sync 2027-03-01 07:00``, or ``Runs nothing now``."""
    if not view.running:
        return "Runs nothing now"
    lines = (f"{look(r.state.value).glyph} {r.schedule_id} {nominal_text(r.nominal_local, 0)}" for r in view.running)
    return f"Runs now: {', '.join(lines)}"


def refuses_text(view: EngineView) -> str:
    """One line per refused schedule: ``Refuses backup: published by bob, whom this engine does not trust …``;
    ``Refuses nothing`` when it runs every active schedule."""
    if not view.refuses:
        return "Refuses nothing" if view.labels is not None else f"Refuses nothing: {OLD_ENGINE}"
    return "\n".join(f"Refuses {schedule}: {why}" for schedule, why in view.refuses)


def detail_text(view: EngineView, earlier: Sequence[EngineView] = ()) -> str:
    """The line beneath an engine's row: what it runs now, then what it refuses, one line each; then the
    earlier engines of the same window it took over from."""
    text = f"{running_text(view)}\n{refuses_text(view)}"
    if earlier:
        last = max(earlier, key=lambda v: v.last_seen)
        count = f"{len(earlier):,} earlier engines" if len(earlier) > 1 else "an earlier engine"
        how = "stopped beating" if last.state is not EnginePresence.RETIRED else "stopped"
        text += f"\nTook over from {count} of this window (the last {how} at {utc_seconds_text(last.last_seen)})"
    return text


def seen_text(view: EngineView, now: datetime) -> str:
    """``5 s ago``."""
    return f"{age_text(max(now - view.last_seen, timedelta(0)))} ago"


@dataclass(frozen=True)
class EnginesRead:
    """One read: the engines and the instant their ages are counted from."""

    now: datetime
    engines: tuple[EngineView, ...]
    #: By engine id: the earlier engines of the same window (host and OS user) it took over from.
    earlier: Mapping[str, tuple[EngineView, ...]] = field(default_factory=dict)


def fold_windows(engines: Sequence[EngineView]) -> tuple[tuple[EngineView, ...], dict[str, tuple[EngineView, ...]]]:
    """A window's engine once: an earlier engine of a window on the same host and OS user that is not
    live any more (closed unexpectedly, or quit) folds under the newest one, which says so. Engines of
    ``schedctl`` are never folded: two of them on one host may be two services."""
    newest: dict[tuple[str, str | None], EngineView] = {}
    for view in sorted(engines, key=lambda v: v.last_seen, reverse=True):
        if view.kind is EngineKind.APP:
            newest.setdefault((view.host, view.os_user), view)
    kept: list[EngineView] = []
    earlier: dict[str, list[EngineView]] = {}
    for view in engines:
        head = newest.get((view.host, view.os_user)) if view.kind is EngineKind.APP else None
        if head is not None and head is not view and not view.live:
            earlier.setdefault(head.engine_id, []).append(view)
        else:
            kept.append(view)
    return tuple(kept), {key: tuple(views) for key, views in earlier.items()}


class EnginesModel(LedgerTableModel):
    """Two rows per engine (:meth:`is_detail`), live ones first, freshest first."""

    COLUMNS = COLUMNS
    TIPS = _TIPS

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(ctx, parent)
        self._read = EnginesRead(ctx.clock.now(), ())
        self._font = tabular_font()
        self._bold = QFont()
        self._bold.setBold(True)  # an engine's name starts its rows: the line beneath belongs to it

    def read_work(self) -> Callable[[], EnginesRead]:
        ctx = self._ctx

        def work() -> EnginesRead:
            now = ctx.clock.now()
            engines, earlier = fold_windows(engines_seen(ctx.ledger, now, STALE_AFTER))
            return EnginesRead(now, engines, earlier)

        return work

    def take(self, answer: EnginesRead) -> None:
        same = [e.engine_id for e in answer.engines] == [e.engine_id for e in self._read.engines]
        self.replace(same, lambda: setattr(self, "_read", answer))

    def engine_at(self, row: int) -> EngineView | None:
        """The engine of ``row`` (its own row or the line beneath it)."""
        engines = self._read.engines
        return engines[row // 2] if 0 <= row < 2 * len(engines) else None

    @staticmethod
    def is_detail(row: int) -> bool:
        """Whether ``row`` is the line beneath an engine (what it runs and refuses), spanned by the view."""
        return row % 2 == 1

    @property
    def engine_count(self) -> int:
        return len(self._read.engines)

    # --- Qt's model interface --------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 2 * len(self._read.engines)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        view = self.engine_at(index.row()) if index.isValid() else None
        if view is None or not 0 <= index.column() < len(COLUMNS):
            return None
        column = index.column()
        if self.is_detail(index.row()):
            return self._detail_data(view, column, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(view, column)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{COLUMNS[column]}: {self.text(view, column)}".replace("\n", "; ")
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 2:
                return f"Last heartbeat {utc_seconds_text(view.last_seen)}"
            if column == 1 and not view.live and view.state is not EnginePresence.RETIRED:
                return "It stopped beating without retiring: killed, crashed, or its machine is off or offline"
            return self.text(view, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(status_look(view).colour) if column == 1 else None
        if role == Qt.ItemDataRole.FontRole and column in (0, 2, 6):
            return self._bold if column == 0 else self._font
        if role == EngineIdRole:
            return view.engine_id
        return None

    def _detail_data(self, view: EngineView, column: int, role: int) -> Any:
        if column != 0:
            return None
        earlier = self._read.earlier.get(view.engine_id, ())
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return detail_text(view, earlier)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{view.host}: {detail_text(view, earlier)}".replace("\n", "; ")
        if role == EngineIdRole:
            return view.engine_id
        return None

    def text(self, view: EngineView, column: int) -> str:
        """The words of one cell."""
        texts = (
            engine_text,
            lambda v: status_look(v).label,
            lambda v: seen_text(v, self._read.now),
            lambda v: v.os_user or "—",
            labels_text,
            trusts_text,
            lambda v: v.version or "—",
        )
        return str(texts[column](view))
