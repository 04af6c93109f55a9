"""The ledger's tables (docs/contract.md §4), declared once for SQLite and PostgreSQL.

The migrations in ``migrations/versions`` build exactly this schema; a test
compares them with Alembic's autogenerate, which must find nothing to do.

Instants are stored as UTC on both backends and always come back as aware UTC
datetimes (:class:`UtcDateTime`). States are stored as their text values.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator, TypeEngine

from core.ledger.states import (
    PERIOD_RELEASING,
    SLOT_RELEASING,
    EngineKind,
    EnginePresence,
    OccurrenceKind,
    OccurrenceState,
    ScheduleState,
    sql_in_list,
)

#: Alembic's version table. Not ``alembic_version``: a PostgreSQL database may be
#: shared with other applications that use Alembic too.
VERSION_TABLE = "tidemark_schema_version"

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class _SqliteUtcText(sqlite.DATETIME):
    """SQLite's DATETIME column with no conversion of its own: :class:`UtcDateTime`
    writes and reads the text itself, in one step (materialization binds a lot of
    instants). The text is the one SQLAlchemy's DATETIME writes."""

    def bind_processor(self, dialect: Dialect) -> None:
        return None

    def result_processor(self, dialect: Dialect, coltype: object) -> None:
        return None


class UtcDateTime(TypeDecorator[datetime]):
    """An instant: refuses naive datetimes, stores UTC, returns aware UTC.

    SQLite has no time zone type: the value is stored as UTC text without an
    offset (``2026-03-08 07:30:00.000000``), whose text order is time order.
    PostgreSQL uses ``timestamp with time zone``.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(_SqliteUtcText())  # type: ignore[no-untyped-call]
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | str | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"the ledger stores instants; {value!r} has no time zone")
        if value.tzinfo is not UTC:
            value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return sqlite_utc_text(value)
        return value

    def process_result_value(self, value: datetime | str | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def sqlite_utc_text(value: datetime) -> str:
    """An aware instant as a SQLite ledger stores it: "YYYY-MM-DD HH:MM:SS.ffffff" in UTC, without
    the "+00:00" (what SQLAlchemy's DATETIME stores)."""
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.isoformat(" ", "microseconds")[:26]


E = TypeVar("E", bound=StrEnum)


class EnumText(TypeDecorator[E], Generic[E]):
    """A :class:`StrEnum` stored as its value in a VARCHAR (no native enum type,
    so adding a member never needs an ``ALTER TYPE``)."""

    impl = String
    cache_ok = True

    def __init__(self, enum: type[E], length: int) -> None:
        super().__init__(length)
        self.enum = enum

    def process_bind_param(self, value: E | str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if isinstance(value, self.enum):
            return str(value)  # a plain str: psycopg would write an Enum's name
        return self.enum(value).value

    def process_result_value(self, value: str | None, dialect: Dialect) -> E | None:
        return None if value is None else self.enum(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UtcDateTime()}  # noqa: RUF012 (SQLAlchemy reads it as a class attribute)


class Schedule(Base):
    """One schedule: its gate, the revision in force and how far it is materialized."""

    __tablename__ = "schedules"
    # A pass selects the schedules to materialize by it (see ``materialize_at``).
    __table_args__ = (Index("ix_schedules_materialize_at", "materialize_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    state: Mapped[ScheduleState] = mapped_column(EnumText(ScheduleState, 16))
    #: The newest published revision (it governs from its cutover on).
    active_revision: Mapped[int] = mapped_column(Integer)
    #: Bumped by every publish, pause, resume and disable: a claim that read an
    #: older value loses its compare-and-set (invariant 3).
    gate_version: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: Bumped by every disable.
    disable_generation: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: Positions before this instant are materialized.
    cursor_utc: Mapped[datetime | None]
    #: For a rule with COUNT: one of its times near the cursor (the nominal wall
    #: time, of revision ``count_revision``) and how many of its times come before
    #: it, so that materializing resumes there instead of counting from DTSTART.
    count_revision: Mapped[int | None]
    count_nominal: Mapped[str | None] = mapped_column(String(32))
    count_index: Mapped[int | None] = mapped_column(BigInteger)
    #: When the schedule needs materializing again (0012): its cursor minus the active
    #: revision's horizon, the instant from which now + horizon passes the cursor.
    #: None: at once (just published, or not materialized since 0012).
    materialize_at: Mapped[datetime | None]
    #: With ``businessPeriod`` (0013): the winners of its periods at the latest period start
    #: at or before the cursor, of revision ``period_revision`` (core/ledger/period_resume.py),
    #: so that materializing resumes there instead of settling periods from DTSTART.
    period_revision: Mapped[int | None]
    period_state: Mapped[str | None] = mapped_column(Text)
    #: The note of the latest pause, resume or disable.
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Revision(Base):
    """A published revision: the canonical spec text, never changed afterwards."""

    __tablename__ = "revisions"

    schedule_id: Mapped[str] = mapped_column(String(64), ForeignKey("schedules.id"), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: ``json.dumps(canonical_dict(spec, cutover_at=...))``, every default explicit.
    spec_json: Mapped[str] = mapped_column(Text)
    cutover_at: Mapped[datetime]
    tzdb_version: Mapped[str] = mapped_column(String(16))
    published_at: Mapped[datetime]
    #: The spec file this revision was published from (absolute path) and the host it is on;
    #: None when it was not recorded (standard input, or published before 0005).
    source_path: Mapped[str | None] = mapped_column(Text)
    source_host: Mapped[str | None] = mapped_column(String(255))
    #: Who published it (0008): the OS user and host its client said, and on PostgreSQL the
    #: role that wrote it, which the database records itself (``session_user``, 0011's
    #: trigger); None when not recorded (before 0008; the role: before 0011).
    publisher_user: Mapped[str | None] = mapped_column(String(255))
    publisher_host: Mapped[str | None] = mapped_column(String(255))
    publisher_role: Mapped[str | None] = mapped_column(String(255))
    #: With ``tzdbPolicy: PIN``: the zone's compiled TZif bytes as published (0009); every
    #: resolution of this revision builds its zone from them. None under FOLLOW.
    tzif: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: The Tidemark version that published it (0009); None before 0009.
    engine_version: Mapped[str | None] = mapped_column(String(32))
    #: With a ``businessCalendar``: the holidays package release installed when it was
    #: published (0010); None without a calendar or before 0010.
    holidays_version: Mapped[str | None] = mapped_column(String(32))


_LIVE_SLOT = f"logical_slot_id IS NOT NULL AND state NOT IN ({sql_in_list(SLOT_RELEASING)})"
_LIVE_PERIOD = f"business_period IS NOT NULL AND state NOT IN ({sql_in_list(PERIOD_RELEASING)})"


class Occurrence(Base):
    """One occurrence: identity, nominal and resolved times apart, its state and lease."""

    __tablename__ = "occurrences"
    __table_args__ = (
        ForeignKeyConstraint(["schedule_id", "revision"], ["revisions.schedule_id", "revisions.revision"]),
        Index("ix_occurrences_schedule_id_position_utc", "schedule_id", "position_utc"),
        Index("ix_occurrences_state_due_at", "state", "due_at"),
        # The monitor's table pages through every occurrence in this order (keyset).
        Index("ix_occurrences_position_order", "position_utc", "nominal_local", "fold_ordinal", "occurrence_id"),
        # Invariants 1 and 2: one live occurrence per instant of a schedule,
        # across revisions. A cancelled one releases its slot.
        Index(
            "uq_occurrences_live_slot",
            "schedule_id",
            "logical_slot_id",
            unique=True,
            sqlite_where=text(_LIVE_SLOT),
            postgresql_where=text(_LIVE_SLOT),
        ),
        # One runnable occurrence per business period of a schedule.
        Index(
            "uq_occurrences_live_period",
            "schedule_id",
            "business_period",
            unique=True,
            sqlite_where=text(_LIVE_PERIOD),
            postgresql_where=text(_LIVE_PERIOD),
        ),
    )

    #: Unique on its own (it hashes the schedule id): claims by id use the primary key.
    occurrence_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    schedule_id: Mapped[str] = mapped_column(String(64))
    revision: Mapped[int] = mapped_column(Integer)
    kind: Mapped[OccurrenceKind] = mapped_column(EnumText(OccurrenceKind, 16))
    nominal_local: Mapped[str] = mapped_column(String(19))
    fold_ordinal: Mapped[int] = mapped_column(Integer)
    resolved_utc: Mapped[datetime | None]
    position_utc: Mapped[datetime]
    #: Dispatch time: resolvedUtc plus the stable jitter; None for rows that never run.
    due_at: Mapped[datetime | None]
    logical_slot_id: Mapped[str | None] = mapped_column(String(37))
    business_period: Mapped[str | None] = mapped_column(String(255))
    state: Mapped[OccurrenceState] = mapped_column(EnumText(OccurrenceState, 24))
    reason: Mapped[str | None] = mapped_column(Text)
    #: The tz database release that resolved it (a tzdata update never rewrites it).
    tzdb_version: Mapped[str] = mapped_column(String(16))
    #: The Tidemark version that wrote it (0009); None before 0009.
    engine_version: Mapped[str | None] = mapped_column(String(32))
    #: The holidays package release that decided its date (0010): a new release never
    #: rewrites it. None for a schedule without a business calendar, or before 0010.
    holidays_version: Mapped[str | None] = mapped_column(String(32))
    attempt_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: Bumped by every successful claim; an attempt records the value it ran under.
    claim_generation: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    lease_owner: Mapped[str | None] = mapped_column(String(255))
    lease_expires_at: Mapped[datetime | None]
    #: RETRY_WAIT: the next attempt is not dispatched before this.
    retry_at: Mapped[datetime | None]
    #: When it reached a terminal state (after_completion counts its delay from here).
    finished_at: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Attempt(Base):
    """One execution of an occurrence (invariant 4)."""

    __tablename__ = "attempts"
    __table_args__ = (UniqueConstraint("occurrence_id", "attempt_number"),)

    attempt_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    occurrence_id: Mapped[str] = mapped_column(String(36), ForeignKey("occurrences.occurrence_id"))
    attempt_number: Mapped[int] = mapped_column(Integer)
    claim_generation: Mapped[int] = mapped_column(Integer)
    execution_epoch: Mapped[int] = mapped_column(Integer)
    worker_host: Mapped[str] = mapped_column(String(255))
    worker_pid: Mapped[int] = mapped_column(Integer)
    #: The engine process's start time (seconds since the epoch) and the boot it ran in:
    #: with host and pid they say for certain whether that engine still lives.
    worker_started: Mapped[float | None] = mapped_column(Float)
    boot_id: Mapped[str | None] = mapped_column(String(64))
    #: The task's own process (its group leader) and its start time, once spawned.
    task_pid: Mapped[int | None] = mapped_column(Integer)
    task_started: Mapped[float | None] = mapped_column(Float)
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    exit_status: Mapped[int | None] = mapped_column(Integer)
    #: Why it did not end with an exit status of its own: timeout, signal, lost, spawn_error...
    error_class: Mapped[str | None] = mapped_column(String(64))
    #: sha256 of the rendered argv, cwd and env.
    input_digest: Mapped[str] = mapped_column(String(64))
    stdout_tail: Mapped[str | None] = mapped_column(Text)
    stderr_tail: Mapped[str | None] = mapped_column(Text)
    #: The state the occurrence moved to because of this attempt.
    outcome: Mapped[OccurrenceState | None] = mapped_column(EnumText(OccurrenceState, 24))


class Event(Base):
    """The append-only outbox: one row per state change, written in its transaction.

    The migration adds triggers that refuse UPDATE and DELETE on this table.
    """

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_schedule_id_id", "schedule_id", "id"),
        # An occurrence's history (the detail panel) and "was it acknowledged" (the attention queue).
        Index("ix_events_occurrence_id_id", "occurrence_id", "id"),
        # AUTOINCREMENT: an id is never reused, so "events after N" never misses one.
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    at: Mapped[datetime]
    schedule_id: Mapped[str | None] = mapped_column(String(64))
    occurrence_id: Mapped[str | None] = mapped_column(String(36))
    kind: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: Who caused it (0008): the OS user and host its client said, and the database role,
    #: recorded by PostgreSQL itself since 0011 (``session_user``); None when not recorded.
    actor_user: Mapped[str | None] = mapped_column(String(255))
    actor_host: Mapped[str | None] = mapped_column(String(255))
    actor_role: Mapped[str | None] = mapped_column(String(255))


class LedgerMeta(Base):
    """One row about the ledger itself."""

    __tablename__ = "ledger_meta"
    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    ledger_id: Mapped[str] = mapped_column(String(36))
    #: Bumped when an engine takes over after a crash: claims of an older epoch are void.
    execution_epoch: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    created_at: Mapped[datetime]
    #: The newest Tidemark version that has run an engine on this ledger (0009); None
    #: until one has. Read and written with :mod:`core.ledger.engine_version`.
    engine_version: Mapped[str | None] = mapped_column(String(32))


class EngineRow(Base):
    """One engine that runs (or ran) on this ledger: it announces itself, beats, and retires.

    A row whose heartbeat is older than the staleness limit belongs to an engine
    that died without retiring; readers treat it as gone.
    """

    __tablename__ = "engines"
    __table_args__ = (Index("ix_engines_state_last_heartbeat", "state", "last_heartbeat"),)

    engine_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    kind: Mapped[EngineKind] = mapped_column(EnumText(EngineKind, 16))
    state: Mapped[EnginePresence] = mapped_column(EnumText(EnginePresence, 16))
    #: The engine process's start time and boot id: a row whose process is gone
    #: (same host, pid free or reused) is dead at once, whatever its heartbeat says.
    process_started: Mapped[float | None] = mapped_column(Float)
    boot_id: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime]
    last_heartbeat: Mapped[datetime]
    retired_at: Mapped[datetime | None]
    #: The OS user running it, its labels (label -> value), the publishers it trusts
    #: (OS users, ``*`` for any) and its Tidemark version (0008); None before 0008.
    os_user: Mapped[str | None] = mapped_column(String(255))
    labels: Mapped[dict[str, str] | None] = mapped_column(JSON)
    trusts: Mapped[list[str] | None] = mapped_column(JSON)
    version: Mapped[str | None] = mapped_column(String(32))


class ExpiredRange(Base):
    """Missed occurrences whose fate was certain, recorded as one range instead of one row each.

    After a long outage the occurrences of [from_utc, to_utc) (positions,
    half-open) of one revision could never run under the misfire policy: they
    are all expired at once, in the transaction that moves the schedule's
    cursor past them. ``occurrences`` counts them when that was cheap to
    know, else it is None. A backfill of the range still works: the rows it
    needs never existed, so each gets a new backfill occurrence.
    """

    __tablename__ = "expired_ranges"
    __table_args__ = (
        ForeignKeyConstraint(["schedule_id", "revision"], ["revisions.schedule_id", "revisions.revision"]),
        Index("ix_expired_ranges_schedule_id_from_utc", "schedule_id", "from_utc"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    schedule_id: Mapped[str] = mapped_column(String(64))
    revision: Mapped[int] = mapped_column(Integer)
    from_utc: Mapped[datetime]
    to_utc: Mapped[datetime]
    #: What expired them: a misfirePolicy value, or "catchUpWindow".
    policy: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    occurrences: Mapped[int | None] = mapped_column(Integer)
    tzdb_version: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]


class AlertRouteRow(Base):
    """A ledger default alert route (0014): told for schedules whose spec has no ``alerts``.

    ``route`` is the text a spec would hold (``mailto:…``, ``https://…``, or
    ``{secret: NAME}``); ``kinds`` the states it hears of, comma-separated.
    """

    __tablename__ = "alert_routes"

    route: Mapped[str] = mapped_column(String(2000), primary_key=True)
    kinds: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]


class AlertSmtp(Base):
    """How ``mailto:`` routes are sent (0014): one row, or none until ``schedctl alerts set --smtp-host``.

    The password is never here: ``password_secret`` names a secret kept on each engine's host.
    """

    __tablename__ = "alert_smtp"
    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    host: Mapped[str] = mapped_column(String(255))
    port: Mapped[int] = mapped_column(Integer)
    #: ``starttls``, ``tls`` (implicit, port 465) or ``none`` (only to a loopback host).
    security: Mapped[str] = mapped_column(String(16))
    username: Mapped[str | None] = mapped_column(String(255))
    password_secret: Mapped[str | None] = mapped_column(String(64))
    sender: Mapped[str] = mapped_column(String(255))
    updated_at: Mapped[datetime]


class AlertOutbox(Base):
    """One alert to tell one route (0014), written in the transaction of the state change it tells of.

    ``occurrence_id`` is the occurrence's id, or for an expired range (many occurrences
    expired at once) an ``exp-`` id of the range. Unique on (occurrence, kind, route):
    each route is told of each occurrence and state once. A sender claims a row by
    setting ``claimed_by`` and ``claimed_until`` (a compare-and-set) and records
    ``delivered_at``; ``next_try_at`` is None once it is delivered or given up, so the
    index on it holds only what is pending.
    """

    __tablename__ = "alert_outbox"
    __table_args__ = (
        UniqueConstraint("occurrence_id", "kind", "route"),
        Index("ix_alert_outbox_next_try_at", "next_try_at"),
        Index("ix_alert_outbox_route_delivered_at", "route", "delivered_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True)
    occurrence_id: Mapped[str] = mapped_column(String(36))
    schedule_id: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(24))
    route: Mapped[str] = mapped_column(String(2000))
    #: What the alert says (schedule, occurrence, state, reason, attempt, times), fixed when written.
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime]
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    next_try_at: Mapped[datetime | None]
    claimed_by: Mapped[str | None] = mapped_column(String(255))
    claimed_until: Mapped[datetime | None]
    delivered_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
