"""What the engine's stages share: its options, the report of a pass, who the
engine is and what it holds now (:class:`Context`), and a claim in hand.

The stages (:mod:`core.engine.plan`, :mod:`~core.engine.promote`,
:mod:`~core.engine.recover`, :mod:`~core.engine.claim`, :mod:`~core.engine.run`,
:mod:`~core.engine.settle`) are functions; an :class:`~core.engine.engine.Engine`
owns one Context and hands it to them. Everything in it that workers change
while a pass reads it is guarded by ``Context.lock``.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.clock import Clock
from core.engine.drift_check import DriftWatch
from core.engine.first_start import FirstStart
from core.engine.leases import LeaseKeeper
from core.engine.processes import ProcessIdentity
from core.engine.runner import PreparedCommand, TaskIdentity
from core.engine.share import Share
from core.engine.specs import Specs
from core.engine.statements import Held
from core.spec.facts import RunFacts
from core.spec.model import Task
from core.team.placement import Placement
from core.version import tidemark_version

#: Set to 1, tasks are not tied to their engine's life (a diagnostic and test switch).
OUTLIVE_ENV = "TIDEMARK_TASKS_OUTLIVE_ENGINE"


@dataclass
class EngineOptions:
    """How an engine behaves; the defaults suit a desktop."""

    lease: timedelta = timedelta(minutes=2)
    """A claim not renewed for this long is considered lost (its engine died)."""
    max_workers: int = 4
    """Schedules whose tasks may run at the same time."""
    tail_bytes: int = 8192
    fill_rows_per_pass: int = 20_000
    """Rows a pass materializes beyond the next hour, toward the horizon. After a
    long outage or a new dense schedule the horizon fills over a few passes, and
    what is due runs first."""
    running_after: timedelta = timedelta(milliseconds=250)
    """A task still running this long after its start is recorded RUNNING at once; one
    that ends sooner has its RUNNING recorded with its outcome, in one transaction."""
    tasks_die_with_engine: bool = field(default_factory=lambda: os.environ.get(OUTLIVE_ENV) != "1")
    """A running task's process group is ended when its engine process dies (see
    :mod:`core.engine.tether`). ``TIDEMARK_TASKS_OUTLIVE_ENGINE=1`` turns it off
    (tasks then outlive a crash, and the next engine finds them as orphans)."""
    deliver_alerts: bool = True
    """Send the alert outbox (after a pass that waits, else on a thread of its own); tests of
    the outbox alone turn it off."""
    alert_timeout: float = 10.0
    """Seconds each network call of an alert may take."""
    version: str = field(default_factory=tidemark_version)
    """The Tidemark version this engine is: on its first pass on a ledger last run by an
    older one, it shadows the materialized future first (:mod:`core.engine.first_start`).
    Tests give another."""


@dataclass
class PassReport:
    """What one pass did, for logs and tests.

    What the workers do (tasks started, runs ended, occurrences skipped for overlap) is
    told on the report of the pass during or after which it happened, once each
    (:mod:`core.engine.activity`): a pass that does not wait for its tasks tells
    what they did on a later pass's report."""

    materialized: int = 0
    promoted: int = 0
    expired: int = 0
    """Occurrences expired: MISFIRE_EXPIRED rows, plus those counted in expired ranges."""
    expired_ranges: int = 0
    """Long stretches of missed occurrences recorded as one range each (core.ledger.expired)."""
    recovered: int = 0
    orphans: int = 0
    """Attempts whose engine died while their task still runs: watched, not settled."""
    started: int = 0
    skipped_overlap: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    ran: Counter[str] = field(default_factory=Counter)
    """Tasks started, by schedule (``started`` is their sum)."""
    finished: dict[str, Counter[str]] = field(default_factory=dict)
    """Outcome -> the schedules whose runs ended so, with how many (``outcomes`` holds the totals)."""
    held: dict[str, str] = field(default_factory=dict)
    """Schedules left alone because a published revision cannot be read, with why."""
    refused: dict[str, str] = field(default_factory=dict)
    """Schedules with a revision this engine does not run (labels, trust), with why: they wait for another."""


@dataclass(frozen=True)
class Claim:
    """An occurrence this engine claimed, with its open attempt and the command to run."""

    occurrence_id: str
    schedule_id: str
    generation: int
    epoch: int
    attempt_id: str
    attempt_number: int
    task: Task
    spec: RunFacts
    identity: TaskIdentity
    command: PreparedCommand  # rendered once at claim time: its digest is on the attempt row
    unprepared: str | None = None  # why the command could not be rendered: recorded as a spawn error, never run

    def held(self, task: tuple[int, float | None] | None = None) -> Held:
        pid, started = task or (None, None)
        return Held(
            self.schedule_id,
            self.occurrence_id,
            self.generation,
            self.attempt_number,
            self.epoch,
            self.attempt_id,
            pid,
            started,
        )


@dataclass
class Unreadable:
    """Published revisions this Tidemark cannot read, as found by :func:`core.engine.plan.hold_unreadable`."""

    revisions: dict[tuple[str, int], tuple[bool, list[str]]] = field(default_factory=dict)
    """Revisions held this pass: (whether it is its schedule's newest, the problems)."""
    schedules: set[str] = field(default_factory=set)
    """Schedules whose newest revision cannot be read: neither materialized nor promoted."""
    readable: set[tuple[str, int]] = field(default_factory=set)
    """Revisions read without a problem (never read again)."""
    told: set[tuple[str, int]] = field(default_factory=set)
    """Unreadable revisions already logged and recorded."""
    failing: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    """Schedules whose materialization failed (a revision read but not expanded: a business
    calendar with no business day within reach), with their active revision then and the
    problems: held, neither materialized nor promoted, until another revision is published."""
    mark: tuple[object, ...] | None = None
    """The ledger's revision mark when ``revisions`` was found (:func:`core.ledger.materialize.revision_mark`)."""


@dataclass
class Refusals:
    """What one engine will not run, found each pass by :func:`core.engine.plan.hold_refused`."""

    revisions: dict[tuple[str, int], str] = field(default_factory=dict)
    """(schedule, revision) -> why this engine does not run it."""
    schedules: set[str] = field(default_factory=set)
    """Schedules whose newest revision this engine does not run: neither materialized nor promoted here."""
    decided: dict[tuple[str, int], str | None] = field(default_factory=dict)
    """Every revision looked at (revisions never change: each is read once per engine)."""
    mark: tuple[object, ...] | None = None
    """The ledger's revision mark when ``revisions`` was found (:func:`core.ledger.materialize.revision_mark`)."""
    cutovers: dict[tuple[str, int], datetime] = field(default_factory=dict)
    """(schedule, revision) -> its cutover, for every revision looked at: which one governs now."""


@dataclass
class Context:
    """One engine as its stages see it: who claims, with what lease, and what it holds now."""

    clock: Clock
    options: EngineOptions
    process: ProcessIdentity
    worker: str
    """The name on this engine's leases: ``host:pid:random``."""
    keeper: LeaseKeeper[Claim]
    """Marks this engine's running claims RUNNING and renews their leases."""
    specs: Specs = field(default_factory=Specs)
    unreadable: Unreadable = field(default_factory=Unreadable)
    placement: Placement = field(default_factory=Placement.of)
    """This engine's labels and the publishers it trusts."""
    refusals: Refusals = field(default_factory=Refusals)
    """What this engine does not run (labels that do not match, publishers it does not trust)."""
    share: Share = field(default_factory=Share)
    """Which schedules this engine materializes when other engines share the ledger."""
    swept: bool = False
    """Whether this engine has looked at every schedule once (its first pass does)."""
    first_start: FirstStart = field(default_factory=FirstStart)
    """Whether this engine has compared its version with the ledger's, and what it found."""
    drift: DriftWatch = field(default_factory=DriftWatch)
    """When this engine last looked for tz database drift."""
    base_env: dict[str, str] | None = None
    """The environment tasks start from, read once a pass (None: read os.environ at each claim)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    mine: set[str] = field(default_factory=set)
    """Occurrences this engine is running now (recovery leaves them alone)."""
    busy: dict[str, datetime] = field(default_factory=dict)
    """Schedule -> when its running task started."""
    groups: dict[str, int] = field(default_factory=dict)
    """Occurrence -> process group of its running task (to interrupt it)."""
    tasks: dict[str, tuple[int, float | None]] = field(default_factory=dict)
    """Attempt -> its task's pid and start time."""
    interrupted: bool = False
    """Running tasks' groups were ended (stop with kill)."""
    marked: set[str] = field(default_factory=set)
    """Occurrences the lease keeper recorded RUNNING (their outcome expects that state first)."""
    elsewhere: set[str] = field(default_factory=set)
    """Schedules a worker found running under another engine's claim this pass: the rest of their
    backlog is that engine's (it claims the next with each outcome), so this engine's workers try
    no more of them until its next dispatch, which clears it (:mod:`core.engine.claim`)."""

    @property
    def held_schedules(self) -> set[str]:
        """Schedules this engine neither materializes nor promotes this pass: their newest
        revision cannot be read, or is not this engine's to run."""
        return self.unreadable.schedules | self.refusals.schedules

    def hold(self, occurrence_id: str) -> None:
        """The engine runs this occurrence now."""
        with self.lock:
            self.mine.add(occurrence_id)

    def release(self, occurrence_id: str) -> None:
        """The engine no longer runs this occurrence."""
        with self.lock:
            self.mine.discard(occurrence_id)
            self.marked.discard(occurrence_id)
