"""Where a task runs and whom an engine trusts (docs/ledger.md, "Teams":
"Where a task runs" and "Whom an engine trusts").

An engine has labels: the built-in ``host`` (:func:`core.team.actor.host_name`) and
``user`` (:func:`core.team.actor.os_user`), plus any given with ``schedctl engine
run --label KEY=VALUE``. A revision runs on an engine when

- its spec's ``runsOn`` labels all equal the engine's (``{any: true}``: any
  engine; absent: the engine's ``host`` is the host the revision was
  published from), and
- the engine trusts the revision's publisher (by default only its own OS
  user's name, on any host; more with ``--trust NAME``, or ``*`` for anyone).

Whom trust is decided on depends on the ledger (docs/ledger.md, "Who can do
what to whom"): on PostgreSQL the database role that wrote the revision, as
the database recorded it (migration 0011), so an engine run by the OS user
``alice`` trusts the role ``alice``; on SQLite, where whoever may write the
file may write anything in it, the OS user the publishing process ran as.
A revision without a recorded publisher (published before migration 0008,
or on PostgreSQL before 0011) is trusted only by ``--trust '*'``: publishing
it again records one.

Everything here is pure: the engine's plan stage (:mod:`core.engine.plan`) and the
waiting line of ``schedctl schedules`` ask :func:`refusal`.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.os_text import string_problem
from core.spec.model import ANY_ENGINE
from core.team.actor import Actor, current_actor
from core.time.durations import human_duration

#: The labels every engine has; ``--label`` may not set them.
HOST_LABEL = "host"
USER_LABEL = "user"
BUILT_IN_LABELS = (HOST_LABEL, USER_LABEL)
#: ``--trust *``: the engine runs what anyone publishes.
TRUST_ANYONE = "*"
#: Why an engine does not run a revision whose publisher the ledger did not record.
NO_PUBLISHER = (
    "has no recorded publisher, which no engine trusts but one run with --trust '*'; "
    "publish it again to record who publishes it (schedctl apply)"
)


class LabelError(ValueError):
    """A ``--label`` or ``--trust`` that cannot be used, with a message naming it."""


@dataclass(frozen=True)
class Placement:
    """One engine's labels and the publishers it trusts."""

    labels: Mapping[str, str]
    trusts: frozenset[str]

    @classmethod
    def of(
        cls, actor: Actor | None = None, labels: Mapping[str, str] | None = None, trusts: Iterable[str] = ()
    ) -> Placement:
        """An engine run by ``actor`` (default: this process's), with extra ``labels``,
        trusting its own user and ``trusts``."""
        actor = actor or current_actor()
        extra = dict(labels or {})
        clash = sorted(set(extra) & set(BUILT_IN_LABELS))
        if clash:
            raise LabelError(f"--label {clash[0]}: {clash[0]} is built in (the engine's own); choose another name")
        return cls({HOST_LABEL: actor.host, USER_LABEL: actor.user, **extra}, frozenset({actor.user, *trusts}))

    def trusting_role(self, role: str | None) -> Placement:
        """This placement also trusting ``role``, the database role its engine logs in as (None:
        SQLite, no roles): what that role publishes comes from the same principal as the engine."""
        return self if role is None or role in self.trusts else Placement(self.labels, self.trusts | {role})

    @property
    def user(self) -> str:
        return self.labels[USER_LABEL]

    @property
    def host(self) -> str:
        return self.labels[HOST_LABEL]

    def trusts_user(self, publisher: str | None) -> bool:
        """Whether a revision published by ``publisher`` may run here (None: no publisher recorded,
        which only ``--trust '*'`` runs)."""
        return TRUST_ANYONE in self.trusts or (publisher is not None and publisher in self.trusts)


@dataclass(frozen=True)
class Wants:
    """What a revision asks of an engine: its ``runsOn`` and who published it from where.

    ``publisher`` is whom trust is decided on: the database role that wrote the revision when
    ``by_role`` (PostgreSQL), else the OS user the publishing process ran as (SQLite); None
    when the ledger recorded none."""

    runs_on: Mapping[str, Any] | None
    publisher: str | None
    publisher_host: str | None
    by_role: bool = False

    @property
    def publisher_text(self) -> str:
        """The publisher as the engine's lines name it: ``bob`` (an OS user), ``role bob``."""
        return f"role {self.publisher}" if self.by_role else str(self.publisher)

    def labels(self) -> dict[str, str]:
        """The labels an engine must have (none: any engine)."""
        if self.runs_on is None:
            return {} if self.publisher_host is None else {HOST_LABEL: self.publisher_host}
        if self.runs_on.get(ANY_ENGINE) is True:
            return {}
        return {str(k): str(v) for k, v in self.runs_on.items()}

    @classmethod
    def of_revision(
        cls, spec_json: str | None, publisher: str | None, publisher_host: str | None, by_role: bool = False
    ) -> Wants:
        """From a stored revision (its canonical text and publisher columns)."""
        try:
            runs_on = json.loads(spec_json or "{}").get("runsOn")
        except (ValueError, AttributeError):
            runs_on = None  # an unreadable revision is held elsewhere (core.engine.plan)
        return cls(runs_on if isinstance(runs_on, dict) else None, publisher, publisher_host, by_role)


def runs_on_text(wants: Wants) -> str:
    """Where a revision runs, in words: ``any engine``, ``engines with host=alpha``."""
    wanted = wants.labels()
    return f"engines with {label_text(wanted)}" if wanted else "any engine"


def mismatch(labels: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str]:
    """The wanted labels an engine with ``labels`` lacks (empty: it matches)."""
    return {k: v for k, v in wanted.items() if labels.get(k) != v}


def refusal(placement: Placement, wants: Wants) -> str | None:
    """Why an engine with ``placement`` does not run the revision, or None when it does."""
    lacks = mismatch(placement.labels, wants.labels())
    if lacks:
        return f"runs on an engine with {label_text(lacks)}"
    if not placement.trusts_user(wants.publisher):
        if wants.publisher is None:
            return NO_PUBLISHER
        return f"published by {wants.publisher_text}, whom this engine does not trust (schedctl engine run --trust)"
    return None


def label_text(labels: Mapping[str, str]) -> str:
    """``host=alpha, gpu=yes``."""
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def parse_label(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from ``--label`` (or the window's engine settings); :class:`LabelError` naming
    what is wrong."""
    _storable("--label", text)
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep:
        raise LabelError(f"--label {text!r}: write KEY=VALUE, e.g. --label gpu=yes")
    if not key:
        raise LabelError(f"--label {text!r}: the label's name is empty; write KEY=VALUE")
    if not value:
        raise LabelError(f"--label {text!r}: the label's value is empty; write KEY=VALUE")
    if key == ANY_ENGINE:
        raise LabelError(f"--label {text!r}: {ANY_ENGINE} is reserved (runsOn: {{any: true}}); choose another name")
    if key in BUILT_IN_LABELS:
        raise LabelError(f"--label {text!r}: {key} is built in (the engine's own); choose another name")
    return key, value


def parse_labels(texts: Iterable[str]) -> dict[str, str]:
    """Every ``--label``, later ones over earlier ones of the same name."""
    return dict(parse_label(t) for t in texts)


def parse_trust(text: str) -> str:
    """A ``--trust`` (or the window's engine settings): a publisher's name (a database role on
    PostgreSQL, an OS user's login name on SQLite), or ``*``; :class:`LabelError` naming what is wrong."""
    _storable("--trust", text)
    user = text.strip()
    if not user or any(c.isspace() for c in user):
        raise LabelError(
            f"--trust {text!r} is not a publisher's name; give a database role (PostgreSQL) or an OS user's "
            "login name (SQLite), or '*' for anyone"
        )
    return user


def parse_trusts(texts: Iterable[str]) -> tuple[str, ...]:
    """Every ``--trust``, once each, in the order given."""
    return tuple(dict.fromkeys(parse_trust(t) for t in texts))


def _storable(option: str, text: str) -> None:
    """Refuse what the ledger cannot store or a service's unit and a log line cannot hold: a NUL
    byte, a lone surrogate, a line break or another control character."""
    problem = string_problem(text)
    if problem:
        raise LabelError(f"{option} {text!r}: {problem}")
    bad = next((ch for ch in text if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        what = "a line break" if bad in "\r\n" else f"a control character (U+{ord(bad):04X})"
        raise LabelError(f"{option} {text!r} has {what}: a label or a name is one line of text")


# --- who could run a schedule now: the waiting line of schedctl schedules and the monitor -------


@dataclass(frozen=True)
class SeenEngine:
    """An engine as its ``engines`` row shows it: labels and trusts (None: an engine from
    before 0008, which runs everything), and when it last beat."""

    labels: Mapping[str, str] | None
    trusts: Iterable[str] | None
    last_seen: datetime
    live: bool

    def matches(self, wanted: Mapping[str, str]) -> bool:
        return self.labels is None or not mismatch(self.labels, wanted)

    def trusts_user(self, publisher: str | None) -> bool:
        if self.trusts is None:
            return True
        trusts = set(self.trusts)
        return TRUST_ANYONE in trusts or (publisher is not None and publisher in trusts)


def waiting_text(wants: Wants, engines: Iterable[SeenEngine], now: datetime) -> str | None:
    """Why no live engine runs the revision, in one line, or None when one does:
    ``waiting for an engine with host=alpha; none seen for 3 h``, or ``…; publisher bob
    is not trusted by the live engines`` (``publisher role bob`` on PostgreSQL)."""
    wanted = wants.labels()
    able = [e for e in engines if e.matches(wanted)]
    if any(e.live and e.trusts_user(wants.publisher) for e in able):
        return None
    what = f"waiting for an engine with {label_text(wanted)}" if wanted else "waiting for an engine"
    if any(e.live for e in able):
        if wants.publisher is None:
            return f"{what}; it has no recorded publisher: publish it again (schedctl apply)"
        return f"{what}; publisher {wants.publisher_text} is not trusted by the live engines"
    if not able:
        return f"{what}; none seen on this ledger"
    seconds = max(0, int((now - max(e.last_seen for e in able)).total_seconds()))
    return f"{what}; none seen for {human_duration(timedelta(seconds=seconds - seconds % 60 or seconds))}"
