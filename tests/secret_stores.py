"""Where a test keeps its task secrets: an in-memory keyring, or the file in a temporary
config folder (keyring's fail backend set, so that the machine's own keyring is never used)."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError

from core import cli

STORES = ("keyring", "file")


class MemoryKeyring(KeyringBackend):
    """A keyring that keeps its passwords in a dict, for tests."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.values.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.values[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.values.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@contextmanager
def secret_store(kind: str, config_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KeyringBackend]:
    """Secrets kept in ``kind`` ("keyring" or "file"), the config folder under ``config_home``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    before = keyring.get_keyring()
    backend: KeyringBackend = MemoryKeyring() if kind == "keyring" else fail.Keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(before)


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """Run ``schedctl argv`` with ``stdin`` as its standard input (not a terminal): status, stdout, stderr."""
    sys.stdin = io.StringIO(stdin)
    try:
        status = cli.main(list(argv))
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return status, out, err
