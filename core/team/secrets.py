"""Task secrets: values a task receives that the ledger never holds (docs/spec.md, "Secrets").

A ``task.env`` value written ``{secret: NAME}`` is a reference; the ledger stores
the reference, and the engine looks the value up on its own host when the task
starts (:func:`resolve`). A secret lives in the OS keyring (the ``keyring``
library, service :data:`SERVICE`: Secret Service on Linux, Keychain on macOS)
or, where no keyring is usable, in ``secrets.json`` in the user's config folder
(``platformdirs``), a file that must be the user's own and mode 0600
(:func:`secrets_file`). ``schedctl secret set`` and the task editor's "Store as
a secret" both call :func:`store`.

The keyring cannot list what it holds, so the names stored there are kept
(names only) in ``keyring-names.json`` beside the secrets file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from core.errors import UserError, first_line
from core.os_text import shown

#: The keyring's service name under which every Tidemark secret is kept.
SERVICE = "tidemark"
#: What a secret's name may be: it shows in specs, commands and messages, never its value.
SECRET_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
SECRET_NAME_RULE = "1-64 letters, digits, '_', '.' or '-', starting with a letter"
#: What stands for a secret's value in an attempt's output tails.
MASK = "***"
_MASK_BYTES = MASK.encode()


class SecretError(UserError):
    """A secret could not be stored, found or read; the message names it, never its value."""


class SecretMissing(SecretError):
    """No secret of that name is kept on this host."""


class Store(Enum):
    """Where a secret is kept."""

    KEYRING = "keyring"
    FILE = "file"


@dataclass(frozen=True)
class Entry:
    """A stored secret's name and where it is (``list`` shows these, never values)."""

    name: str
    store: Store
    where: str


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a secret, or None when it can."""
    if not isinstance(name, str) or not SECRET_NAME.fullmatch(name):
        return f"{shown(name)} is not a secret name: {SECRET_NAME_RULE}"
    return None


def check_name(name: str) -> None:
    why = name_problem(name)
    if why is not None:
        raise SecretError(why)


# The file -----------------------------------------------------------------


def config_dir() -> Path:
    """Tidemark's folder in the user's config folder (``platformdirs``; XDG_CONFIG_HOME on Linux)."""
    import platformdirs  # only to read or write the file: a spec's check needs no more than the name rule

    return Path(platformdirs.user_config_dir("tidemark"))


def secrets_file() -> Path:
    return config_dir() / "secrets.json"


def _names_file() -> Path:
    return config_dir() / "keyring-names.json"


def _checked(path: Path) -> None:
    """Refuse a secrets file that others could read or that is not the user's own."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise SecretError(f"{path} is not a regular file; secrets are kept in a plain file of mode 0600")
    if info.st_uid != os.getuid():
        raise SecretError(f"{path} belongs to another user (uid {info.st_uid}); it must be your own, mode 0600")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise SecretError(f"{path} has mode {mode:04o}: others may read it, so it is not used; run: chmod 600 {path}")


def _read_json(path: Path, *, check: bool) -> dict[str, str]:
    if not path.exists():
        return {}
    if check:
        _checked(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SecretError(f"cannot read {path}: {first_line(exc)}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise SecretError(f"{path} is not a JSON object of names to text values")
    return data


def _write_json(path: Path, data: Mapping[str, str]) -> None:
    """Write ``data`` whole, mode 0600 from its first byte, replacing the file in one step."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(dict(sorted(data.items())), out, indent=2)
            out.write("\n")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _file_secrets() -> dict[str, str]:
    return _read_json(secrets_file(), check=True)


# The keyring --------------------------------------------------------------


def _keyring() -> Any | None:
    """The keyring backend when one is usable here; None where keyring has only its fail or null backends."""
    try:
        import keyring
        from keyring.backends import chainer, fail, null

        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, (fail.Keyring, null.Keyring)):
        return None
    if isinstance(backend, chainer.ChainerBackend) and not backend.backends:
        return None
    return backend


def keyring_usable() -> bool:
    return _keyring() is not None


def _keyring_names() -> list[str]:
    return sorted(_read_json(_names_file(), check=False))


def _remember(name: str, present: bool) -> None:
    names = {n: "" for n in _keyring_names()}
    if present:
        names[name] = ""
    else:
        names.pop(name, None)
    _write_json(_names_file(), names)


# What the rest of Tidemark calls ----------------------------------------


def store(name: str, value: str, *, where: Store | None = None, replace: bool = True) -> Store:
    """Keep ``value`` as the secret ``name``: in the keyring when one is usable (or ``where`` says), else a file.

    With ``replace`` False, a secret of that name already kept here with another value is refused."""
    check_name(name)
    if not value:
        raise SecretError(f"the secret {name} would be empty; give it a value")
    if not replace and _existing(name) not in (None, value):
        raise SecretError(
            f"a secret {name} is already kept on this computer with another value; "
            f"remove it first (schedctl secret delete {name}) or rename the variable"
        )
    backend = _keyring() if where in (None, Store.KEYRING) else None
    if where is Store.KEYRING and backend is None:
        raise SecretError(f"no usable OS keyring here to keep {name}; use the file ({secrets_file()})")
    if backend is not None:
        try:
            backend.set_password(SERVICE, name, value)
        except Exception as exc:
            raise SecretError(f"the keyring refused to keep {name}: {first_line(exc)}") from None
        _remember(name, True)
        return Store.KEYRING
    data = _file_secrets()
    data[name] = value
    _write_json(secrets_file(), data)
    return Store.FILE


def _existing(name: str) -> str | None:
    try:
        return lookup(name)
    except SecretMissing:
        return None


def delete(name: str) -> list[Store]:
    """Remove the secret ``name`` from wherever it is; where it was removed from (empty: it was nowhere)."""
    check_name(name)
    removed: list[Store] = []
    backend = _keyring()
    if backend is not None:
        try:
            if backend.get_password(SERVICE, name) is not None:
                backend.delete_password(SERVICE, name)
                removed.append(Store.KEYRING)
        except Exception as exc:
            raise SecretError(f"the keyring refused to remove {name}: {first_line(exc)}") from None
    if name in _keyring_names():
        _remember(name, False)
    data = _file_secrets()
    if name in data:
        del data[name]
        _write_json(secrets_file(), data)
        removed.append(Store.FILE)
    return removed


def entries() -> list[Entry]:
    """Every secret Tidemark knows of, by name, with where it is kept."""
    found: list[Entry] = []
    backend = _keyring()
    if backend is not None:
        label = f"{type(backend).__module__}.{type(backend).__name__} (service {SERVICE})"
        found += [Entry(n, Store.KEYRING, label) for n in _keyring_names()]
    found += [Entry(n, Store.FILE, str(secrets_file())) for n in _file_secrets()]
    return sorted(found, key=lambda e: (e.name, e.store.value))


def lookup(name: str) -> str:
    """The value of the secret ``name`` on this host; :class:`SecretError` saying why when there is none."""
    check_name(name)
    backend = _keyring()
    trouble = ""
    if backend is not None:
        try:
            value = backend.get_password(SERVICE, name)
        except Exception as exc:
            value, trouble = None, f"; the keyring failed: {first_line(exc)}"
        if value is not None:
            return str(value)
    path = secrets_file()
    try:
        data = _file_secrets()
    except SecretError as exc:
        raise SecretError(f"secret {name} cannot be read: {exc}{trouble}") from None
    if name in data:
        return data[name]
    places = ("the keyring (service tidemark) nor " if backend is not None else "") + str(path)
    raise SecretMissing(f"secret {name} is not set on this host (neither in {places}){trouble}")


def resolve(env: Mapping[str, str | Any]) -> tuple[dict[str, str], tuple[str, ...]]:
    """``env`` with every ``{secret: NAME}`` reference replaced by its value, and the values used (to mask)."""
    out: dict[str, str] = {}
    used: list[str] = []
    for var, value in env.items():
        name = reference_name(value)
        if name is None:
            out[var] = value
        else:
            out[var] = lookup(name)
            used.append(out[var])
    return out, tuple(used)


def reference_name(value: object) -> str | None:
    """The secret's name when ``value`` is a reference (a model's or a loaded document's), else None."""
    name = getattr(value, "secret", None)
    if isinstance(name, str):
        return name
    if isinstance(value, Mapping) and isinstance(value.get("secret"), str):
        return str(value["secret"])
    return None


def _received(value: str) -> bytes:
    """The bytes a task receives for ``value`` in its environment (what :func:`os.fsencode` makes of it:
    UTF-8, and the very bytes of a value that was not UTF-8, which Python carries as surrogates)."""
    try:
        return os.fsencode(value)
    except UnicodeEncodeError:  # no process can receive it (its start fails); masked all the same
        return value.encode("utf-8", "surrogatepass")


class SecretMask:
    """Replaces each secret value by :data:`MASK` in a stream of bytes that arrives in chunks (a task's output).

    Values are matched as the bytes the task received, before anything decodes the output: a value
    that is not UTF-8 would decode to replacement characters that no longer match it. A value split
    across two chunks is masked whole: the last ``longest value - 1`` bytes wait for the next chunk
    (or :meth:`end`). At one place the longest value wins; the result is that of masking the whole
    stream at once, however it was cut.
    """

    def __init__(self, values: Iterable[str]) -> None:
        found = sorted({_received(v) for v in values if v}, key=len, reverse=True)
        self._pattern = re.compile(b"|".join(re.escape(v) for v in found)) if found else None
        self._wait = len(found[0]) - 1 if found else 0
        self._pending = b""

    def feed(self, chunk: bytes) -> bytes:
        """What can be told of the stream so far, masked; the bytes a value may start in wait."""
        if self._pattern is None:
            return chunk
        data = self._pending + chunk
        sure = len(data) - self._wait  # a value starting before here lies whole in data
        told: list[bytes] = []
        at = 0
        for match in self._pattern.finditer(data):
            if match.start() >= sure:
                break
            told += [data[at : match.start()], _MASK_BYTES]
            at = match.end()
        cut = max(at, sure)
        told.append(data[at:cut])
        self._pending = data[cut:]
        return b"".join(told)

    def end(self) -> bytes:
        """The rest of the stream, masked, once it has ended."""
        rest, self._pending = self._pending, b""
        return rest if self._pattern is None else self._pattern.sub(_MASK_BYTES, rest)


#: Words that make a variable's name look like a credential's, whole or at a word's end
#: (``API_TOKEN``, ``APIKEY``, ``DB_PASSWORD``); ``PWD`` alone is the working directory.
_CREDENTIAL_WORDS = ("TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "KEY", "CREDENTIALS")
#: Words ending like a credential word that are not one (KEYBOARD_LAYOUT has no such word at all).
_NOT_CREDENTIALS = frozenset({"MONKEY", "TURKEY", "HOCKEY", "JOCKEY", "DONKEY", "WHISKEY", "HOTKEY"})


def looks_like_credential(var: str) -> bool:
    """Whether a variable's name suggests its value is a credential: ``API_TOKEN``, ``AWS_SECRET_ACCESS_KEY``,
    ``DB_PWD``; not ``KEYBOARD_LAYOUT``, ``TOKENIZER`` or ``PWD``."""
    words = [w.upper() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", var) if w]
    if "PWD" in words and len(words) > 1:
        return True
    return any(word not in _NOT_CREDENTIALS and any(word.endswith(c) for c in _CREDENTIAL_WORDS) for word in words)


def credential_warnings(env: Mapping[str, object]) -> list[str]:
    """One line per clear-text ``env`` value whose name looks like a credential, with the hint."""
    return [
        f"task.env.{var}: looks like a credential and is in clear in the spec (and the ledger); "
        f"keep it as a secret: schedctl secret set {var} then write {var}: {{secret: {var}}}"
        for var, value in env.items()
        if isinstance(value, str) and value and looks_like_credential(var)
    ]
