"""Opening a ledger: a SQLite file (the default) or a PostgreSQL database.

:func:`open_ledger` checks the database before it touches it, brings the schema
up to date (Alembic, ``upgrade head``) and returns a :class:`Ledger` that hands
out sessions. Anything that stops it (a locked, read-only or damaged file, a
schema from a newer Tidemark, a server that does not answer) is one
:class:`~core.errors.LedgerError` naming the ledger and the problem, raised
before anything was changed.

Write transactions are serialized on both backends: SQLite by ``BEGIN
IMMEDIATE``, PostgreSQL by a transaction-level advisory lock (:func:`lock_for_write`).
That keeps event ids in commit order, so a reader following "events after id N"
never skips one that commits late.

On PostgreSQL an engine's materialization, promotion, claims and outcomes are the
exception (``write(serialize=False)``): they hold the same lock in its shared mode, so
that engines work side by side while every serialized writer (publishing, pausing,
fencing, recovering) still runs alone. Such a transaction takes the shared lock with its
first statement (in the same statement when that locks schedules' rows), keeps what it
decided on a schedule by locking its schedule's row (:func:`lock_schedules`), and
writes its events last, under a lock of their own held until commit
(:func:`flush_events`): event ids still become visible in commit order.

A pooled PostgreSQL connection is checked as it is taken without a round trip (one the
server closed is replaced), and pinged only after it sat in the pool for a while
(:data:`PING_AFTER`); a serialized write that finds its connection gone at its first
statement begins once more on a fresh one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select as io_select
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
import psycopg
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Connection, Engine, create_engine, event, inspect, make_url, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError, SQLAlchemyError
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

from core.clock import Clock, SystemClock
from core.errors import LedgerError, first_line
from core.ledger.models import VERSION_TABLE, LedgerMeta
from core.team.actor import Actor, current_actor
from core.team.redact import mask_urls
from core.version import is_newer, tidemark_version

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
DEFAULT_BUSY_TIMEOUT = 5.0
#: SQLSTATE lock_not_available: PostgreSQL gave up waiting for a lock (``lock_timeout``).
LOCK_NOT_AVAILABLE = "55P03"
#: The key of PostgreSQL's write lock: a fixed number derived from a fixed name.
WRITE_LOCK_KEY = int.from_bytes(hashlib.sha256(b"tidemark ledger write").digest()[:8], "big", signed=True)
#: The key of PostgreSQL's lock on the event log, taken last by a transaction that shares the write lock.
EVENT_LOCK_KEY = int.from_bytes(hashlib.sha256(b"tidemark ledger events").digest()[:8], "big", signed=True)
_WRITE_OPTION = "tidemark_write"
#: Set on a held writer's connection, which waits a few milliseconds per try already (see _polling).
_POLLING = "tidemark_polling"
_LOCKED = "tidemark_write_locked"
#: Where a transaction that shares the write lock (PostgreSQL) keeps its events until commit.
_SHARED = "tidemark_write_shared"
#: Where such a transaction keeps the schedules whose rows it has locked.
_SCHEDULES = "tidemark_locked_schedules"
#: Where a held writer's session keeps its driver connection during a transaction.
DRIVER = "tidemark_driver"
#: Seconds to wait for a PostgreSQL server before giving up (unless the URL says).
CONNECT_TIMEOUT = 10
#: Where a write session keeps the actor of its transaction (see :func:`session_actor`).
_ACTOR = "tidemark_actor"


def default_path() -> Path:
    """``ledger.db`` in the user's data directory (``platformdirs``)."""
    return Path(platformdirs.user_data_dir("tidemark")) / "ledger.db"


def _resolve(url: str | None) -> tuple[URL, Path | None]:
    """The SQLAlchemy URL and, for SQLite, the file's path."""
    if url is None or not url.strip():
        path = default_path()
        return URL.create("sqlite+pysqlite", database=str(path)), path
    text_url = url.strip()
    if "://" not in text_url:
        # A bare path is a SQLite file: ``--db ./team.db`` is what people type.
        path = Path(text_url).expanduser().resolve()
        return URL.create("sqlite+pysqlite", database=str(path)), path
    shown = mask_urls(text_url)
    try:
        parsed = make_url(text_url)
        backend = parsed.get_backend_name()
    except ArgumentError as exc:
        raise LedgerError(f"{shown}: not a database URL ({mask_urls(first_line(exc))})") from None
    except ValueError:
        raise LedgerError(
            f"{shown}: not a database URL: its host and port cannot be read "
            "(a port is a number; an IPv6 host is written in brackets, e.g. [::1]:5432)"
        ) from None
    if parsed.host and "@" in parsed.host:
        raise LedgerError(f"{shown}: not a database URL: write an @ in a user name or password as %40")
    if backend == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:" or database.startswith("file:"):
            raise LedgerError(f"{shown}: a ledger must be a SQLite file, e.g. sqlite:////path/to/ledger.db")
        if parsed.username or parsed.password or parsed.host or parsed.port:
            raise LedgerError(
                f"{shown}: a SQLite URL names a file only, with no user, password or host; "
                "e.g. sqlite:////path/to/ledger.db"
            )
        path = Path(database).expanduser().resolve()
        return parsed.set(drivername="sqlite+pysqlite", database=str(path)), path
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg"), None
    raise LedgerError(f"{shown}: unsupported database {backend!r}; use a SQLite file or postgresql+psycopg://")


def _display(url: URL, path: Path | None) -> str:
    # mask_urls too: a password may also sit in the query (``?password=...``).
    return str(path) if path is not None else mask_urls(url.render_as_string(hide_password=True))


# --- SQLite ----------------------------------------------------------------------------


def _sqlite_problem(where: str, exc: BaseException) -> LedgerError:
    """One clear message for what SQLite said."""
    message = str(exc)
    low = message.lower()
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        what = "is not a Tidemark ledger: not a SQLite database, or a damaged one"
        hint = "move it aside, or choose another file with --db"
    elif "locked" in low or "busy" in low:
        what = "is locked by another program"
        hint = "try again when it has finished, or stop the other engine"
    elif "readonly" in low or "read-only" in low or "permission" in low:
        what = "is read-only"
        hint = "Tidemark needs to write to the file and its directory (for the -wal and -shm files)"
    elif "unable to open" in low:
        what = "cannot be opened"
        hint = "check that the file and its directory exist and are writable"
    else:
        what = "cannot be used"
        hint = "see the database's message"
    return LedgerError(f"{where}: the ledger {what} ({message}); {hint}")


def _create_file(path: Path) -> None:
    """Create an empty database file readable by its owner only."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return  # another process made it first
    except OSError as exc:
        raise LedgerError(f"{path}: cannot create the ledger ({exc.strerror or exc})") from None
    try:
        if hasattr(os, "fchmod"):  # POSIX: whatever the umask says
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _no_ledger(where: str) -> LedgerError:
    return LedgerError(f"{where}: there is no ledger here; publish a schedule with schedctl apply to create one")


def _preflight_sqlite(path: Path, busy_timeout: float, create: bool = True) -> None:
    """Look at the file with plain sqlite3 before SQLAlchemy and Alembic touch it.

    Reads first (damaged? a foreign or newer schema?), then probes for the
    write lock, and only then switches the journal to WAL: a refused file is
    left exactly as it was.
    """
    if path.exists() and not path.is_file():
        raise LedgerError(f"{path}: the ledger must be a file, but this is a directory or a device")
    if not path.exists():
        if not create:
            raise _no_ledger(str(path))
        _create_file(path)
    uri = f"{path.as_uri()}?mode=rw"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None)) as con:
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            version = None
            if VERSION_TABLE in tables:
                version = [row[0] for row in con.execute(f"SELECT version_num FROM {VERSION_TABLE}")]
            last = None
            if "ledger_meta" in tables and "engine_version" in {
                row[1] for row in con.execute("PRAGMA table_info(ledger_meta)")
            }:
                last = con.execute("SELECT engine_version FROM ledger_meta WHERE id = 1").fetchone()
            _check_schema_state(str(path), tables, version, last[0] if last else None)
            if version is None and not create:
                raise _no_ledger(str(path))
            con.execute("BEGIN IMMEDIATE")
            con.execute("ROLLBACK")
            mode = con.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                con.execute("PRAGMA journal_mode = WAL")
    except sqlite3.Error as exc:
        raise _sqlite_problem(str(path), exc) from None


#: Connections a SQLite ledger's pool keeps, and how many more it opens when every one is in use.
#: A window runs many threads that use the ledger at once (each engine worker holds a connection
#: for its whole loop; every monitor view reads on a thread of its own), and a SQLite connection
#: is only an open file: the pool is sized so that no thread waits for another's connection.
SQLITE_POOL_SIZE = 8
SQLITE_MAX_OVERFLOW = 120


#: SQLite's page cache per connection, in KiB as its PRAGMA takes them (negative).
SQLITE_CACHE_KIB = -512


def _sqlite_engine(url: URL, busy_timeout: float) -> Engine:
    engine = create_engine(
        url,
        connect_args={"timeout": busy_timeout},
        pool_size=SQLITE_POOL_SIZE,
        max_overflow=SQLITE_MAX_OVERFLOW,
        pool_use_lifo=True,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy, not the sqlite3 module, says when a transaction begins
        # (the documented recipe): reads are then repeatable, DDL and
        # savepoints are transactional, and writers can BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        # synchronous FULL: a committed claim must survive a power cut, or a
        # task could run twice; the engine commits rarely enough to afford it.
        # cache_size: SQLite's page cache per connection, 512 KiB instead of its 2 MiB; the
        # pages it no longer keeps are in the operating system's cache (docs/benchmarks.md,
        # "Memory per schedule", issue 25).
        pragmas = ("foreign_keys = ON", "synchronous = FULL", f"busy_timeout = {int(busy_timeout * 1000)}")
        for pragma in (*pragmas, f"cache_size = {SQLITE_CACHE_KIB}"):
            dbapi_connection.execute(f"PRAGMA {pragma}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A writer takes the write lock up front. A deferred transaction that
        # read first could not upgrade to a writer once another one committed.
        # On the driver's connection: a begin is no statement SQLAlchemy needs to see.
        driver = conn.connection.driver_connection
        options = conn.get_execution_options()
        if options.get(_WRITE_OPTION):
            _begin_immediate(driver, busy_timeout, polling=options.get(_POLLING, False))
        else:
            driver.execute("BEGIN")  # type: ignore[union-attr]

    return engine


#: How long one try for SQLite's write lock waits (milliseconds) before the next.
_LOCK_POLL_MS = 2


def _begin_immediate(driver: Any, busy_timeout: float, *, polling: bool = False) -> None:
    """BEGIN IMMEDIATE, trying every few milliseconds for ``busy_timeout`` seconds.

    SQLite's own busy handler sleeps longer and longer between tries (100 ms at
    last), so a writer that commits and begins again at once (an engine pass's
    batches) would keep the lock from it for good; tried this often, the waiter
    gets in at the next gap between two transactions. ``polling``: the connection
    waits a few milliseconds per try already (a held writer's, :meth:`Ledger.writer`),
    so its ``busy_timeout`` is not set and set back around each begin."""
    deadline = time.monotonic() + busy_timeout
    if not polling:
        driver.execute(f"PRAGMA busy_timeout = {_LOCK_POLL_MS}")
    try:
        while True:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                    raise
    finally:
        if not polling:
            driver.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")


@contextmanager
def _polling(driver: Any) -> Iterator[None]:
    """A held writer's connection waits a few milliseconds per try for SQLite's locks while the
    writer holds it (every transaction on it begins with :func:`_begin_immediate`'s loop, and
    inside one the write lock is held), and its own wait again once it goes back to the pool."""
    own = driver.execute("PRAGMA busy_timeout").fetchone()[0]
    driver.execute(f"PRAGMA busy_timeout = {_LOCK_POLL_MS}").close()
    try:
        yield
    finally:
        with contextlib.suppress(sqlite3.Error):  # a connection that failed is not reused
            driver.execute(f"PRAGMA busy_timeout = {int(own)}").close()


# --- PostgreSQL's connections --------------------------------------------------------------

#: A pooled server connection back in the pool for longer than this (seconds) is pinged, a round
#: trip, before it is used again; one back sooner (an engine's next transaction) is only looked
#: at on this side, with none (:func:`_closed_by_server`). See docs/decisions.md,
#: "A pooled connection checked without a round trip".
PING_AFTER = 5.0
#: Where a pooled connection's record keeps when it came back to the pool (``time.monotonic``).
_RETURNED = "tidemark_returned"
#: Set on a connection whose transaction shares the write lock but has not taken it yet.
_UNLOCKED = "tidemark_unlocked"


def _readable(fd: int) -> bool:
    """Whether there is something to read on a socket now (no wait)."""
    if hasattr(io_select, "poll"):  # any descriptor, however high its number
        poller = io_select.poll()
        poller.register(fd, io_select.POLLIN)
        return bool(poller.poll(0))
    return bool(io_select.select([fd], [], [], 0)[0])


def _closed_by_server(driver: Any) -> bool:
    """Whether the server has closed this idle connection, found without a round trip: a server
    that ends a connection (``pg_terminate_backend``, a restart, ``idle_session_timeout``) sends
    its reason and closes the socket, so anything to read on an idle connection is read, and
    the end of the stream (libpq: "server closed the connection") means it is gone."""
    pgconn = driver.pgconn
    for _ in range(3):  # the reason, then the end of the stream
        if driver.closed or driver.broken or pgconn.socket < 0:
            return True
        if not _readable(pgconn.socket):
            return False
        try:
            pgconn.consume_input()
        except psycopg.OperationalError:
            return True
    return bool(driver.broken)


def _server_engine(engine: Engine) -> Engine:
    """``engine`` with its pooled connections checked as they are taken (SQLAlchemy's
    ``pool_pre_ping`` would cost a round trip every time): one the server closed is replaced
    (the pool tries again on a ``DisconnectionError``), and one idle for longer than
    :data:`PING_AFTER` is pinged first."""

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED] = time.monotonic()
        record.info.pop(_UNLOCKED, None)  # a shared lock never taken is not owed by the next transaction

    event.listen(engine, "before_cursor_execute", _lock_first)

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.pop(_RETURNED, None)
        if returned is None:
            return  # just connected
        if time.monotonic() - returned > PING_AFTER:
            try:
                engine.dialect.do_ping(dbapi_connection)
            except psycopg.Error as exc:
                raise DisconnectionError(f"the server did not answer a ping ({first_line(exc)})") from exc
        elif _closed_by_server(dbapi_connection):
            raise DisconnectionError("the server closed the connection while it was in the pool")

    return engine


# --- schema versions ---------------------------------------------------------------------


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for the migrations shipped in this package (no alembic.ini)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest schema revision this build knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _known_revisions() -> set[str]:
    return {script.revision for script in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def _last_engine(connection: Connection) -> str | None:
    """The Tidemark version that last ran an engine on the ledger (``ledger_meta.engine_version``),
    read without failing a statement: None when the table or the column is not there."""
    inspector = inspect(connection)
    if not inspector.has_table("ledger_meta"):
        return None
    if "engine_version" not in {column["name"] for column in inspector.get_columns("ledger_meta")}:
        return None
    version = connection.scalar(text("SELECT engine_version FROM ledger_meta WHERE id = 1"))
    return str(version) if version is not None else None


def _check_schema_state(
    where: str, tables: set[str], versions: list[str] | None, last_engine: str | None = None
) -> None:
    """Refuse a schema this build does not know, and a database that is someone else's.

    A newer schema is refused in one line that names the version needed when the ledger
    records one: the Tidemark that last ran an engine on it (``last_engine``), when it is
    newer than this one."""
    if versions is None:
        if tables - {"sqlite_sequence"}:
            raise LedgerError(
                f"{where}: this database holds tables but is not a Tidemark ledger "
                f"(no {VERSION_TABLE} table); choose another database with --db"
            )
        return
    unknown = [v for v in versions if v not in _known_revisions()]
    if unknown:
        this = tidemark_version()
        if last_engine is not None and is_newer(last_engine, this):
            raise LedgerError(
                f"{where}: this ledger was migrated by a newer Tidemark (schema {', '.join(unknown)}; Tidemark "
                f"{last_engine} last ran an engine on it); this is Tidemark {this} (schema {head_revision()}): "
                f"install Tidemark {last_engine} or newer"
            )
        raise LedgerError(
            f"{where}: the ledger's schema is at revision {', '.join(unknown)}, newer than this Tidemark "
            f"knows (this is Tidemark {this}, schema {head_revision()}); upgrade Tidemark to use this ledger"
        )


def schema_revision(connection: Connection) -> str | None:
    """The schema revision a database is at (None before the first migration)."""
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    heads = context.get_current_heads()
    return heads[0] if heads else None


def _upgrade(connection: Connection, where: str, clock: Clock, create: bool = True) -> None:
    """Check the version, migrate to head and make sure ledger_meta has its row, in one transaction."""
    inspector = inspect(connection)
    tables = set(inspector.get_table_names())
    versions = None
    if VERSION_TABLE in tables:
        versions = list(connection.scalars(text(f"SELECT version_num FROM {VERSION_TABLE}")))
    if connection.dialect.name == "postgresql":
        # A shared server's database may hold other applications' tables.
        tables = tables & {"schedules", "revisions", "occurrences", "attempts", "events", "ledger_meta"}
    _check_schema_state(where, tables, versions, _last_engine(connection) if versions else None)
    if versions is None and not create:
        raise _no_ledger(where)
    command.upgrade(alembic_config(connection), "head")
    if connection.scalar(select(LedgerMeta.id)) is None:
        values = {"id": 1, "ledger_id": str(uuid.uuid4()), "execution_epoch": 1, "created_at": clock.now()}
        insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
        connection.execute(insert(LedgerMeta).values(**values).on_conflict_do_nothing())


def lock_for_write(session: Session) -> None:
    """Serialize writers. PostgreSQL: an advisory lock held until commit (taking it
    again in the same transaction is harmless). SQLite: the ``BEGIN IMMEDIATE`` of
    :meth:`Ledger.write` already holds the write lock, so nothing to do."""
    if session.get_bind().dialect.name != "postgresql":
        return
    transaction = session.get_transaction()
    if transaction is not None and session.info.get(_LOCKED) is transaction:
        return  # this transaction holds it already
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})
    session.info[_LOCKED] = session.get_transaction()


@dataclass
class SharedWrite:
    """A PostgreSQL transaction that holds the write lock in its shared mode: its
    events wait here until commit (see :func:`flush_events`)."""

    transaction: SessionTransaction | None
    #: The transaction's connection as the driver (psycopg) has it: the hot path's statements
    #: run on it directly (:func:`run_shared`).
    driver: Any = None
    #: Whether the shared write lock has been taken (it goes with the first statement).
    locked: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Inserts rows on the driver's connection (see :mod:`core.ledger.events`).
    insert: Callable[[Any, list[dict[str, Any]]], None] | None = None
    #: Writes that nothing in the transaction reads back, sent on the driver's connection in the
    #: commit's pipeline before the events (an attempt's row: one round trip less per claim).
    deferred: list[Callable[[Any], None]] = field(default_factory=list)

    def owed_lock(self) -> bool:
        """Whether the shared write lock is still to be taken; from now on it counts as taken
        (the caller sends it, before or with its statement)."""
        if self.locked:
            return False
        self.locked = True
        return True


#: The shared write lock, as its own statement.
_SHARE_LOCK = "SELECT pg_advisory_xact_lock_shared(%s)"


def _share_write(session: Session) -> None:
    """Take the write lock in its shared mode: serialized writers wait for this
    transaction, and it for them, but transactions that share it run side by side.

    The lock goes with the transaction's first statement: in the same statement when that
    locks schedules' rows (:func:`lock_schedules`, a worker's outcome and a claim), else just
    before it (:func:`_lock_first`, :func:`run_shared`), or in the commit's pipeline
    (:func:`flush_events`). One round trip less per transaction; until then nothing was read
    or written."""
    connection = session.connection()
    shared = SharedWrite(session.get_transaction(), connection.connection.driver_connection)
    connection.info[_UNLOCKED] = shared
    session.info[_SHARED] = shared
    session.info[_SCHEDULES] = set()


def _lock_first(conn: Connection, cursor: Any, *_args: Any) -> None:
    """Before a statement sent through SQLAlchemy in a transaction that shares the write lock
    but has not taken it yet (``before_cursor_execute``): take it, on the same cursor."""
    shared = conn.info.pop(_UNLOCKED, None)
    if shared is not None and shared.owed_lock():
        cursor.execute(_SHARE_LOCK, [WRITE_LOCK_KEY])


def shared_write(session: Session) -> SharedWrite | None:
    """The shared write of the session's transaction (None: it is serialized, or SQLite's)."""
    shared = session.info.get(_SHARED)
    if isinstance(shared, SharedWrite) and shared.transaction is session.get_transaction():
        return shared
    return None


def run_shared(session: Session, shared: SharedWrite, sql: str, params: Any) -> Any:
    """Run one statement (psycopg's placeholders) of a shared write on its driver connection,
    past SQLAlchemy's execution (the engine's hot path); returns psycopg's cursor. The shared
    lock goes first when it is still owed. A connection found gone is invalidated, so that the
    pool does not hand it out again."""
    driver = shared.driver
    try:
        if shared.owed_lock():
            driver.execute(_SHARE_LOCK, [WRITE_LOCK_KEY])
        return driver.execute(sql, params)
    except psycopg.Error as exc:
        if driver.closed or driver.broken:
            session.connection().invalidate(exc)
        raise


def lock_schedules(session: Session, schedule_ids: Collection[str], *, skip_locked: bool = False) -> set[str]:
    """Lock the rows of these schedules until commit (``FOR NO KEY UPDATE``, in id order),
    in a transaction that shares the write lock; returns those it holds. With
    ``skip_locked``, a row another transaction holds is passed over instead of waited for.

    What a claim decides on a schedule (its gate, whether something of it is in flight)
    then stays true until it commits; elsewhere (SQLite, a serialized writer) the
    write lock already gives that, and every id is returned."""
    shared = shared_write(session)
    if shared is None:
        return set(schedule_ids)
    held: set[str] = session.info[_SCHEDULES]
    wanted = sorted(set(schedule_ids) - held)
    if wanted:
        first = shared.owed_lock()  # the shared write lock, in the same statement
        rows = run_shared(session, shared, _LOCK_ROWS[first, skip_locked], {"ids": wanted, "key": WRITE_LOCK_KEY})
        held.update(row[0] for row in rows)
    return held & set(schedule_ids)


def _lock_rows(first: bool, skip_locked: bool) -> str:
    """The rows of schedules, locked in id order; ``first``: the shared write lock before them,
    in the same statement (a one-time filter, evaluated before any row is read or locked,
    whether or not a row matches)."""
    return (
        "SELECT id FROM schedules WHERE id = ANY(%(ids)s)"
        + (" AND (SELECT pg_advisory_xact_lock_shared(%(key)s)) IS NOT NULL" if first else "")
        + " ORDER BY id FOR NO KEY UPDATE"
        + (" SKIP LOCKED" if skip_locked else "")
    )


_LOCK_ROWS = {(first, skip): _lock_rows(first, skip) for first in (False, True) for skip in (False, True)}


#: The most events sent in the commit's pipeline; a transaction with more (a materialization's
#: batch) sends its lock, events and commit one after the other. A statement of many events is a
#: message of hundreds of KiB, and with one that large in the pipeline the driver was seen
#: (rarely, on a loaded machine) to wait for the server's answer with part of it still unsent,
#: while the server waited for the rest: both waiting for ever. A small transaction's events
#: (a run's outcome) keep the pipeline and its round trip saved.
PIPELINE_EVENTS = 64


def flush_events(session: Session) -> None:
    """Write the events a shared write kept back, last, and commit: under the event log's
    own lock, held until the commit, so that their ids become visible in commit order.
    The lock is taken when nothing else is left to wait for, so no two writers wait on
    each other; and the lock, the events and the commit go to the server in one pipeline,
    so that no writer holds it while this process waits for its turn to run."""
    shared = shared_write(session)
    if shared is None or not (shared.rows or shared.deferred):
        return
    session.flush()  # the transaction's own changes first: the commit below ends it
    rows, shared.rows = shared.rows, []
    deferred, shared.deferred = shared.deferred, []
    driver = shared.driver
    with driver.pipeline() if len(rows) <= PIPELINE_EVENTS else nullcontext():
        if shared.owed_lock():  # nothing was sent before: the shared lock first
            driver.execute(_SHARE_LOCK, [WRITE_LOCK_KEY])
        for write in deferred:
            write(driver)
        if rows:
            assert shared.insert is not None
            driver.execute("SELECT pg_advisory_xact_lock(%s)", [EVENT_LOCK_KEY])
            shared.insert(driver, rows)
        driver.commit()
    # What commits the session afterwards finds the transaction ended: the driver does nothing.


@contextmanager
def _committed(session: Session) -> Iterator[None]:
    """The session's transaction, begun already: committed when the block ends, rolled back if it
    raises (what ``sessionmaker.begin()`` does, for a transaction begun more than once)."""
    try:
        yield
    except BaseException:
        session.rollback()
        raise
    session.commit()


class NoActorError(RuntimeError):
    """An event written in a session that is not a :class:`Ledger`'s write transaction."""


def session_actor(session: Session) -> Actor:
    """Who acts in this write transaction: the actor :meth:`Ledger.write` was given (else the
    ledger's own, the OS user and host of this process), with the database role it uses.

    Every event the transaction writes records it (``events.actor_*``). A session that no
    :class:`Ledger` opened for writing has no actor: :class:`NoActorError`, so that no
    decision is ever written without its author."""
    actor = session.info.get(_ACTOR)
    if not isinstance(actor, Actor):
        raise NoActorError("events are written in a Ledger.write() transaction, which knows who acts")
    return actor


# --- the ledger --------------------------------------------------------------------------


class Ledger:
    """An open ledger: an engine, the session factories and the clock to stamp changes with.

    Use :meth:`write` for a unit of work that changes something and :meth:`read`
    for queries. Close it (or use it as a context manager) to release connections.
    """

    def __init__(self, engine: Engine, where: str, clock: Clock, actor: Actor | None = None) -> None:
        self.engine = engine
        #: The file path, or the URL with its password hidden.
        self.where = where
        self.clock = clock
        #: Who writes when a write names no actor (None: this process's OS user and host,
        #: :func:`core.team.actor.current_actor`, read at each write).
        self.actor = actor
        #: The database role this ledger logged in as (PostgreSQL's ``session_user``), asked once.
        self._role: tuple[str | None] | None = None
        self._read = sessionmaker(engine, expire_on_commit=False)
        self._write = sessionmaker(engine.execution_options(**{_WRITE_OPTION: True}), expire_on_commit=False)
        # SQLite has one writer at a time: threads of this process queue here and are
        # handed the lock at once, instead of sleeping in SQLite's busy handler
        # (which backs off up to 100 ms per try). Reentrant, so that a nested write
        # behaves as it would without it. PostgreSQL's advisory lock wakes waiters itself.
        self._writers = threading.RLock() if engine.dialect.name == "sqlite" else None
        #: PostgreSQL: how long a serialized write waits for the write lock before it fails
        #: (None: as long as it takes). SQLite's wait is the ``busy_timeout`` it was opened with.
        #: A command sets it, so that a pause behind a stuck writer is refused, not left hanging;
        #: an engine leaves it unset (a failed write would end its pass).
        self.lock_wait: float | None = None

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def _login_role(self, session: Session) -> str | None:
        if self._role is None:
            # Once per ledger: the role of a connection string does not change. session_user, not
            # current_user: the role that logged in, which SET ROLE does not change, and the one
            # the database records with each revision and event (migration 0011).
            role = session.scalar(text("SELECT session_user")) if self.dialect == "postgresql" else None
            self._role = (None if role is None else str(role),)
        return self._role[0]

    def role(self) -> str | None:
        """The database role this ledger logged in as (None on SQLite, which has no roles): on
        PostgreSQL, whom the revisions it publishes are trusted as (docs/ledger.md, "Teams")."""
        if self._role is None:
            with self.read() as session:
                return self._login_role(session)
        return self._role[0]

    def _actor(self, session: Session, actor: Actor | None) -> Actor:
        """``actor`` (else the ledger's, else this process's) with the session's database role."""
        return (actor or self.actor or current_actor()).with_role(self._login_role(session))

    def _begin_write(self, session: Session, serialize: bool) -> None:
        """Begin the session's transaction with the write lock (see :meth:`write`). A serialized
        write whose server connection turns out to be gone at its first statement (nothing
        read or written yet) begins once more, on a fresh connection."""
        for again in (False, True):
            session.connection()  # begin now, so that the write lock is taken first
            if not serialize and self.dialect == "postgresql":
                _share_write(session)  # its lock goes with its first statement
                return
            try:
                if self.lock_wait is not None and self.dialect == "postgresql":
                    session.execute(text(f"SET LOCAL lock_timeout = {max(1, round(self.lock_wait * 1000))}"))
                lock_for_write(session)
                return
            except DBAPIError as exc:
                if again or not exc.connection_invalidated:
                    raise
                session.rollback()

    @contextmanager
    def write(self, actor: Actor | None = None, *, serialize: bool = True) -> Iterator[Session]:
        """One unit of work: commits when the block ends, rolls back if it raises.

        Every event it writes records ``actor`` (default: the ledger's, else this
        process's OS user and host) with the database role (:func:`session_actor`).

        Without ``serialize`` (an engine's claims and outcomes), PostgreSQL runs it beside
        other such transactions (see the module's docstring); SQLite serializes it anyway."""
        with self._writers or contextlib.nullcontext(), self._write() as session:
            self._begin_write(session, serialize)
            with _committed(session):
                session.info[_ACTOR] = self._actor(session, actor)
                yield session
                flush_events(session)

    def make_way(self) -> None:
        """Between two write transactions of a long job (an engine pass's batches): on SQLite,
        stay out of the write lock long enough for another process trying for it to get in
        (it tries every few milliseconds). PostgreSQL queues lock waiters itself."""
        if self.dialect == "sqlite":
            time.sleep(2 * _LOCK_POLL_MS / 1000)

    @contextmanager
    def writer(self, *, serialize: bool = True) -> Iterator[Callable[[], AbstractContextManager[Session]]]:
        """Many units of work for a loop that writes often (an engine worker):
        yields a factory of ``write()``-like transactions, each committed when its
        block ends. Objects loaded in one transaction are forgotten at its end:
        read again, never reused stale.

        On SQLite the loop holds one connection, which saves a pool checkout,
        a session set-up and the lookup of the driver's connection per
        transaction. A server's connection is not held: it could drop while a
        long task runs, and the task's outcome must still reach the ledger, so
        each transaction takes one from the pool, checked first (one the server
        closed meanwhile is replaced, see :func:`_server_engine`).

        Every transaction's events record this process's actor (the ledger's, else
        its OS user and host), worked out once for the loop. ``serialize`` as for
        :meth:`write`."""
        mine = self.actor or current_actor()
        if self.dialect != "sqlite":
            with self._write() as pooled:

                @contextmanager
                def pooled_transaction() -> Iterator[Session]:
                    try:
                        self._begin_write(pooled, serialize)
                        with _committed(pooled):
                            pooled.info[_ACTOR] = self._actor(pooled, mine)
                            yield pooled
                            flush_events(pooled)
                    finally:
                        pooled.close()  # the connection goes back to the pool, loaded rows are forgotten

                yield pooled_transaction
            return
        options = {_WRITE_OPTION: True, _POLLING: True}
        with self.engine.execution_options(**options).connect() as connection:
            # The session joins each transaction of the held connection and leaves
            # committing it to the connection.
            session = Session(bind=connection, expire_on_commit=False, join_transaction_mode="rollback_only")
            actor = self._actor(session, mine)  # SQLite has no roles: the same for every transaction
            writers = self._writers or contextlib.nullcontext()

            @contextmanager
            def transaction() -> Iterator[Session]:
                with writers, connection.begin():
                    session.info[DRIVER] = connection.connection.driver_connection  # a new one, if reconnected
                    session.info[_ACTOR] = actor
                    untouched = False
                    try:
                        yield session
                        session.flush()
                        # The engine's hot path goes past the session: most often it never began.
                        untouched = session.get_transaction() is None and not session.identity_map
                    finally:
                        session.info.pop(DRIVER, None)
                        if not untouched:
                            session.close()  # forgets loaded rows; the connection stays

            with _polling(connection.connection.driver_connection):
                yield transaction

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for queries; whatever it did is rolled back at the end."""
        with self._read() as session:
            yield session

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ledger({self.where!r})"


def _make_engine(url: URL, path: Path | None, busy_timeout: float, create: bool = True) -> Engine:
    if path is not None:
        _preflight_sqlite(path, busy_timeout, create)
        return _sqlite_engine(url, busy_timeout)
    connect_args = {} if "connect_timeout" in url.query else {"connect_timeout": CONNECT_TIMEOUT}
    return _server_engine(create_engine(url, connect_args=connect_args))


#: Alembic keeps the running migration's context in module globals (``alembic.context``
#: and ``alembic.op``), so two threads of one process must not migrate at once, even
#: different ledgers. Taken before any database lock, never while holding one.
_MIGRATING = threading.Lock()


def _current(connection: Connection) -> bool:
    """Whether the ledger is at the newest schema with its ``ledger_meta`` row: nothing to migrate."""
    if schema_revision(connection) != head_revision():
        return False
    return connection.scalar(select(LedgerMeta.id)) is not None


def _migrate(engine: Engine, where: str, clock: Clock, create: bool = True, lock_wait: float | None = None) -> None:
    """Bring the schema to head under the write lock. On PostgreSQL a ledger already at head is
    only read (opening it never waits behind a writer), and the lock is waited for at most
    ``lock_wait`` seconds."""
    try:
        with _MIGRATING, engine.connect() as connection:
            if engine.dialect.name == "postgresql":
                current = _current(connection)
                connection.rollback()
                if current:
                    return
            options = connection.execution_options(**{_WRITE_OPTION: True})
            with options.begin():
                if engine.dialect.name == "postgresql":
                    if lock_wait is not None:
                        options.execute(text(f"SET LOCAL lock_timeout = {max(1, round(lock_wait * 1000))}"))
                    options.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})
                _upgrade(options, where, clock, create)
    except LedgerError:
        raise
    except sqlite3.Error as exc:  # raised by the driver itself, from the begin hook
        raise _sqlite_problem(where, exc) from None
    except DBAPIError as exc:
        original = exc.orig if exc.orig is not None else exc
        if engine.dialect.name == "sqlite":
            raise _sqlite_problem(where, original) from None
        first_line = str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
        if getattr(original, "sqlstate", None) == "42501":  # a role without the right to read or migrate
            from core.ledger.role_kinds import unopened_line

            raise LedgerError(f"{where}: {unopened_line(engine.url.username, first_line)}") from None
        if getattr(original, "sqlstate", None) == LOCK_NOT_AVAILABLE:  # lock_wait ran out
            raise LedgerError(
                f"{where}: the ledger is locked by another program ({first_line}); "
                "try again when it has finished, or stop the other engine"
            ) from None
        raise LedgerError(f"{where}: the ledger cannot be used ({first_line})") from None
    except SQLAlchemyError as exc:
        raise LedgerError(f"{where}: the ledger cannot be used ({exc})") from None


def open_ledger(
    url: str | None = None,
    clock: Clock | None = None,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    migrate: bool = True,
    create: bool = True,
) -> Ledger:
    """Open (and create, and migrate) a ledger.

    ``url``: ``None`` for ``ledger.db`` in the user's data directory, a SQLite
    URL or plain path, or ``postgresql+psycopg://user@host/db``. A new SQLite
    file is created with mode 0600 and put in WAL mode; connections wait up to
    ``busy_timeout`` seconds for a lock and enforce foreign keys. With
    ``migrate`` (the default) the schema is upgraded to head; without it the
    schema must already be current. Without ``create``, a ledger that does not
    exist yet (no file, or a database without the ledger's tables) is a
    :class:`LedgerError`, and nothing is created: what a reader uses.
    """
    clock = clock or SystemClock()
    target, path = _resolve(url)
    where = _display(target, path)
    engine = _make_engine(target, path, busy_timeout, create)
    try:
        if migrate:
            _migrate(engine, where, clock, create, busy_timeout)
        else:
            _require_head(engine, where)
    except BaseException:
        engine.dispose()
        raise
    return Ledger(engine, where, clock)


def _require_head(engine: Engine, where: str) -> None:
    try:
        with engine.connect() as connection:
            current = schema_revision(connection)
            last = _last_engine(connection) if current not in (None, head_revision()) else None
    except DBAPIError as exc:
        raise LedgerError(f"{where}: the ledger cannot be read ({exc.orig})") from None
    if current != head_revision():
        _check_schema_state(where, set(), [current] if current else None, last)
        raise LedgerError(
            f"{where}: the ledger's schema is at {current or 'nothing'}, not {head_revision()}; run schedctl db upgrade"
        )


def upgrade_ledger(
    url: str | None = None, clock: Clock | None = None, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT
) -> str:
    """Bring a ledger's schema to head (``schedctl db upgrade``); returns the revision it is at."""
    with open_ledger(url, clock, busy_timeout=busy_timeout) as ledger, ledger.engine.connect() as connection:
        revision = schema_revision(connection)
    assert revision is not None
    return revision


def check_url(url: str) -> str:
    """Check a ledger's URL or path without opening anything: where it is (the password
    hidden), or a :class:`LedgerError` saying what is wrong with it."""
    target, path = _resolve(url)
    return _display(target, path)
