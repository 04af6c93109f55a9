"""Which live engines would run a schedule published now: the line under the
designer's "Runs on" (docs/gui.md, docs/spec.md ``runsOn``).

The spec is not published yet: its publisher would be the person at the
window (:func:`core.team.actor.current_actor`, with the database role the window's
ledger logged in as: on PostgreSQL engines trust roles), and a spec without
``runsOn`` would run on engines whose ``host`` is theirs. An engine matches when it is live,
has every wanted label (:mod:`core.team.placement`) and trusts that publisher; one
that has the labels but would not trust them is named apart, as the reason the
runs could still wait.

Also here: the "Engines with labels" rows (``KEY=VALUE``) read as a
``runsOn`` map, each problem naming its row (:func:`read_label_rows`). Pure:
the time, the publisher and the engines (:func:`core.ledger.monitor_reads.engines_seen`)
are arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from core.spec.model import ANY_ENGINE, runs_on_value
from core.team.actor import Actor
from core.team.placement import HOST_LABEL, TRUST_ANYONE, Wants, label_text, mismatch
from core.time.durations import human_duration


class SeenEngineRow(Protocol):
    """What this module reads of an engine (:class:`core.ledger.engine_queries.EngineView`)."""

    @property
    def host(self) -> str: ...
    @property
    def os_user(self) -> str | None: ...
    @property
    def labels(self) -> Mapping[str, str] | None: ...
    @property
    def trusts(self) -> tuple[str, ...] | None: ...
    @property
    def live(self) -> bool: ...
    @property
    def last_seen(self) -> datetime: ...


def engine_name(engine: SeenEngineRow) -> str:
    """``alpha (alice)``: the engine's ``host`` label (the host it was recorded on before 0008) and
    the OS user running it."""
    host = (engine.labels or {}).get(HOST_LABEL, engine.host)
    return f"{host} ({engine.os_user})" if engine.os_user else host


def _has(engine: SeenEngineRow, wanted: Mapping[str, str]) -> bool:
    # An engine from before migration 0008 has no labels: it runs everything, as it did.
    return engine.labels is None or not mismatch(engine.labels, wanted)


def _principal(publisher: Actor) -> str:
    """Whom engines decide to trust: the database role on PostgreSQL, else the OS user."""
    return publisher.user if publisher.role is None else publisher.role


def _trusts(engine: SeenEngineRow, publisher: str) -> bool:
    trusts = engine.trusts
    return trusts is None or TRUST_ANYONE in trusts or publisher in trusts


@dataclass(frozen=True)
class EngineMatch:
    """Which live engines run a spec published now by :attr:`publisher`."""

    #: The labels an engine must have (empty: any engine).
    wanted: Mapping[str, str]
    publisher: Actor
    #: Names (:func:`engine_name`, sorted) of the live engines that have the labels and trust the publisher.
    matching: tuple[str, ...]
    #: Live engines that have the labels but do not trust the publisher.
    untrusting: tuple[str, ...]
    #: When an engine with the labels was last seen, when none is live (None: never seen).
    last_seen: datetime | None

    def text(self, now: datetime) -> str:
        """The line under "Runs on", e.g. ``Matches 2 live engines: alpha (alice), build-1 (ci)``."""
        if not self.matching:
            return f"No live engine matches: the runs will wait — {self._why_none(now)}"
        n = len(self.matching)
        line = f"Matches {n} live engine{'s' if n != 1 else ''}: {_names(self.matching)}"
        if self.untrusting:
            line += f"; not counted: {_names(self.untrusting)}, {self._distrust('which does', 'which do')}"
        return line

    def _distrust(self, one: str, many: str) -> str:
        """``which does not trust alice (schedctl engine run --trust alice)``."""
        name = _principal(self.publisher)
        who = name if self.publisher.role is None else f"role {name}"
        verb = one if len(self.untrusting) == 1 else many
        return f"{verb} not trust {who} (schedctl engine run --trust {name})"

    def _why_none(self, now: datetime) -> str:
        if self.untrusting:
            return f"{_names(self.untrusting)} {self._distrust('has the labels but does', 'have the labels but do')}"
        which = f"engine with {label_text(self.wanted)}" if self.wanted else "engine"
        if self.last_seen is None:
            return f"no {which} was ever seen on this ledger"
        seconds = max(0, int((now - self.last_seen).total_seconds()))
        ago = human_duration(timedelta(seconds=seconds - seconds % 60 or seconds))
        return f"last seen {which} {ago} ago"


def _names(names: Sequence[str]) -> str:
    """``alpha (alice), beta (alice) ×2``: each name once, with how many engines share it."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.items())


def engine_match(runs_on: Any, publisher: Actor, engines: Iterable[SeenEngineRow]) -> EngineMatch:
    """Which of ``engines`` would run a spec with ``runs_on`` (its ``runsOn``, None when absent)
    published by ``publisher`` (its role, when it has one, is whom engines trust). A ``runs_on``
    that is not a map matches as absent (the designer shows its problem apart)."""
    principal = _principal(publisher)
    wants = Wants(runs_on if isinstance(runs_on, dict) else None, principal, publisher.host, publisher.role is not None)
    wanted = wants.labels()
    able = [e for e in engines if _has(e, wanted)]
    live = [e for e in able if e.live]
    seen = [e.last_seen for e in able]
    return EngineMatch(
        wanted,
        publisher,
        tuple(sorted(engine_name(e) for e in live if _trusts(e, principal))),
        tuple(sorted(engine_name(e) for e in live if not _trusts(e, principal))),
        max(seen) if seen and not live else None,
    )


# --- the "Engines with labels" rows ---------------------------------------------------------------


def label_rows(runs_on: Any) -> list[str]:
    """A stored ``runsOn`` map as its ``KEY=VALUE`` rows (``any`` and non-maps: no rows)."""
    if not isinstance(runs_on, dict):
        return []
    return [f"{k}={v}" for k, v in runs_on.items() if k != ANY_ENGINE]


def read_label_rows(rows: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` rows as a ``runsOn`` map; ValueError naming the row that is not one (no ``=``,
    an empty name or value, ``any``, a name given twice) or saying there is none."""
    labels: dict[str, str] = {}
    for number, text in enumerate(rows, start=1):
        if not text.strip():
            raise ValueError(f"row {number} is empty: type KEY=VALUE or remove the row")
        key, sep, value = (part.strip() for part in text.partition("="))
        if not sep:
            raise ValueError(f"row {number}: {text.strip()!r} is not KEY=VALUE; write e.g. gpu=yes")
        if not key:
            raise ValueError(f"row {number}: the label's name is empty; write KEY=VALUE")
        if not value:
            raise ValueError(f"row {number}: {key} has no value; write {key}=VALUE")
        if key == ANY_ENGINE:
            raise ValueError(f"row {number}: {ANY_ENGINE} is not a label; choose Any engine instead")
        if key in labels:
            raise ValueError(f"row {number}: {key} is given twice")
        labels[key] = value
    if not labels:
        raise ValueError("name at least one label an engine must have, or choose Any engine")
    value_checked: dict[str, str] = runs_on_value(labels)  # the spec's own rule, as validation applies it
    return value_checked
