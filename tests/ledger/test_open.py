"""Opening a ledger that cannot be used: one clear LedgerError, and nothing changed."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from core.cli import main as schedctl
from core.errors import LedgerError, UserError
from core.ledger.db import _sqlite_problem, head_revision, open_ledger
from core.ledger.models import VERSION_TABLE
from core.version import tidemark_version


def _fingerprint(directory: Path) -> dict[str, str]:
    """Every file in a directory with a digest of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture
def ledger_file(tmp_path: Path) -> Path:
    """A migrated, closed SQLite ledger."""
    path = tmp_path / "ledger.db"
    open_ledger(str(path)).close()
    return path


def test_ledger_error_is_a_user_error() -> None:
    assert issubclass(LedgerError, UserError)


def test_a_locked_ledger(ledger_file: Path) -> None:
    before = _fingerprint(ledger_file.parent)
    holder = sqlite3.connect(ledger_file, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another engine in the middle of a long write
        with pytest.raises(LedgerError) as caught:
            open_ledger(str(ledger_file), busy_timeout=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(caught.value)
    assert message.startswith(f"{ledger_file}: the ledger is locked by another program")
    assert "try again" in message
    assert _fingerprint(ledger_file.parent) == before


def test_a_damaged_file_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    path.write_text("these are my notes, not a database\n" * 200)
    before = _fingerprint(tmp_path)
    with pytest.raises(LedgerError) as caught:
        open_ledger(str(path))
    assert str(caught.value).startswith(f"{path}: the ledger is not a Tidemark ledger: not a SQLite database")
    assert "move it aside" in str(caught.value)
    assert _fingerprint(tmp_path) == before


def test_someone_elses_sqlite_database_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE recipes (name TEXT)")
    con.close()
    before = _fingerprint(tmp_path)
    with pytest.raises(LedgerError, match=r"holds tables but is not a Tidemark ledger"):
        open_ledger(str(path))
    assert _fingerprint(tmp_path) == before


def _set_version(url: str, version: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = :v"), {"v": version})
    finally:
        engine.dispose()


def _version(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return str(conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar_one())
    finally:
        engine.dispose()


def test_a_newer_schema_is_refused_on_every_backend(ledger_url: str) -> None:
    open_ledger(ledger_url).close()
    _set_version(ledger_url, "9999_from_the_future")
    with pytest.raises(LedgerError) as caught:
        open_ledger(ledger_url)
    message = str(caught.value)
    assert "the ledger's schema is at revision 9999_from_the_future, newer than this Tidemark knows" in message
    assert f"(this is Tidemark {tidemark_version()}, schema {head_revision()})" in message
    assert "upgrade Tidemark" in message and len(message.splitlines()) == 1
    assert _version(ledger_url) == "9999_from_the_future"


def _set_last_engine(url: str, version: str) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE ledger_meta SET engine_version = :v WHERE id = 1"), {"v": version})
    finally:
        engine.dispose()


@pytest.mark.parametrize("command", [["schedules"], ["db", "upgrade"], ["engine", "run", "--once"]])
def test_a_ledger_migrated_by_a_newer_tidemark_names_the_version_needed(
    ledger_url: str, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """A downgrade: one line, exit 2, naming the Tidemark that last ran an engine on the ledger."""
    open_ledger(ledger_url).close()
    _set_version(ledger_url, "0010_from_the_future")
    _set_last_engine(ledger_url, "99.1.0")
    capsys.readouterr()
    assert schedctl([*command, "--db", ledger_url]) == 2
    out, err = capsys.readouterr()
    where = ledger_url.removeprefix("sqlite:///")
    assert out == ""
    assert err.splitlines() == [
        f"schedctl {' '.join(command[:2] if command[0] != 'schedules' else command[:1])}: {where}: "
        "this ledger was migrated by a newer Tidemark (schema 0010_from_the_future; Tidemark 99.1.0 last ran an "
        f"engine on it); this is Tidemark {tidemark_version()} (schema {head_revision()}): "
        "install Tidemark 99.1.0 or newer"
    ]
    assert _version(ledger_url) == "0010_from_the_future"


def test_an_older_last_engine_is_not_named_as_needed(ledger_url: str) -> None:
    open_ledger(ledger_url).close()
    _set_version(ledger_url, "0010_from_the_future")
    _set_last_engine(ledger_url, "0.0.7")
    with pytest.raises(LedgerError) as caught:
        open_ledger(ledger_url)
    assert "newer than this Tidemark knows" in str(caught.value) and "Tidemark 0.0.7" not in str(caught.value)


def test_a_newer_sqlite_schema_keeps_its_bytes(ledger_file: Path) -> None:
    _set_version(f"sqlite:///{ledger_file}", "9999_from_the_future")
    before = _fingerprint(ledger_file.parent)
    with pytest.raises(LedgerError, match=f"^{ledger_file}: the ledger's schema is at revision 9999"):
        open_ledger(str(ledger_file))
    assert _fingerprint(ledger_file.parent) == before


def _open_as_nobody(path: Path) -> str:
    """Try to open ``path`` in a child process that runs as an unprivileged user; the error text comes back.

    Root ignores permission bits, so a read-only file is only read-only to someone else.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 0
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            try:
                open_ledger(str(path)).close()
                message = "opened"
            except LedgerError as exc:
                message = str(exc)
            os.write(write_end, message.encode())
        except BaseException as exc:
            os.write(write_end, f"child failed: {exc!r}".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    return message


@pytest.fixture
def world_readable_dir() -> Iterator[Path]:
    """A directory others may enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="tidemark-ro-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for child in path.iterdir():
            child.unlink()
        path.rmdir()


def test_a_read_only_ledger(world_readable_dir: Path) -> None:
    path = world_readable_dir / "ledger.db"
    open_ledger(str(path)).close()
    path.chmod(0o444)
    before = _fingerprint(world_readable_dir)
    if os.geteuid() == 0:
        message = _open_as_nobody(path)
    else:
        with pytest.raises(LedgerError) as caught:
            open_ledger(str(path))
        message = str(caught.value)
    assert message.startswith(f"{path}: the ledger is read-only"), message
    assert "needs to write" in message
    assert _fingerprint(world_readable_dir) == before


def test_sqlite_messages_are_classified() -> None:
    cases = {
        "attempt to write a readonly database": "is read-only",
        "database is locked": "is locked by another program",
        "file is not a database": "is not a Tidemark ledger",
        "database disk image is malformed": "is not a Tidemark ledger",
        "unable to open database file": "cannot be opened",
        "disk I/O error": "cannot be used",
    }
    for raw, expected in cases.items():
        message = str(_sqlite_problem("/x/ledger.db", sqlite3.OperationalError(raw)))
        assert message.startswith(f"/x/ledger.db: the ledger {expected}"), message
        assert f"({raw}); " in message


def test_a_directory_is_not_a_ledger(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="must be a file"):
        open_ledger(str(tmp_path))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        pytest.param("sqlite://", "a ledger must be a SQLite file", id="memory"),
        pytest.param("mysql://u@h/db", "unsupported database 'mysql'", id="mysql"),
        pytest.param("postgresql+psycopg://", None, id="pg_without_host"),
    ],
)
def test_urls_that_cannot_be_a_ledger(url: str, message: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    monkeypatch.setenv("PGPORT", str(_free_port()))
    with pytest.raises(LedgerError, match=message or "cannot be used"):
        open_ledger(url)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_names_the_url_without_its_password() -> None:
    url = f"postgresql+psycopg://someone:s3cret@127.0.0.1:{_free_port()}/ledger?connect_timeout=2"
    with pytest.raises(LedgerError) as caught:
        open_ledger(url)
    message = str(caught.value)
    assert message.startswith("postgresql+psycopg://someone:***@127.0.0.1:")
    assert "s3cret" not in message
