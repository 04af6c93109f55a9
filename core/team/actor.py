"""Who is acting: the OS user and host behind a command, and the database role it uses.

Every decision a person or an engine writes into the ledger records its actor
(docs/ledger.md, "Teams"). The host is the machine's name, or
``TIDEMARK_HOSTNAME`` when set: tests use it to play several hosts on one
machine, and a person may set it to name a machine the same way across
renames. The user is the OS account running the process, read from its uid,
never from ``LOGNAME`` or ``USER`` (any process sets those) and never a text
a person types. Both are what the client says: on PostgreSQL the database
records the role that wrote each revision and event itself (``session_user``,
migration 0011); SQLite has no roles (docs/ledger.md, "Who can do what to
whom").
"""

from __future__ import annotations

import os
import pwd
import socket
from dataclasses import dataclass

HOSTNAME_VARIABLE = "TIDEMARK_HOSTNAME"


@dataclass(frozen=True)
class Actor:
    """An OS user on a host, with the database role it acts as (None: no roles, or not known)."""

    user: str
    host: str
    role: str | None = None

    def __str__(self) -> str:
        """``user@host``, with ``(role R)`` when the role is not the user's own name."""
        base = f"{self.user}@{self.host}"
        return base if self.role in (None, self.user) else f"{base} (role {self.role})"

    def with_role(self, role: str | None) -> Actor:
        return Actor(self.user, self.host, role)


def host_name() -> str:
    """This machine's name as Tidemark records it: ``TIDEMARK_HOSTNAME``, else the OS's."""
    return os.environ.get(HOSTNAME_VARIABLE, "").strip() or socket.gethostname()


def os_user() -> str:
    """The OS account running this process: the login name of its real uid (the numeric uid
    where the uid has no passwd entry). Never ``LOGNAME`` or ``USER``, which ``getpass.getuser``
    prefers: a process that sets ``LOGNAME=root`` is not root."""
    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # no passwd entry: a bare container uid
        return str(uid)


def current_actor() -> Actor:
    """The actor of this process, without a database role."""
    return Actor(os_user(), host_name())
