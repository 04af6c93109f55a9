"""Whom an engine's trust in a stored revision is decided on (docs/ledger.md, "Who can do
what to whom").

On PostgreSQL it is the database role that wrote the revision, recorded by the database
itself (``revisions.publisher_role``, set from ``session_user`` by a trigger since migration
0011, whatever the client sent). On SQLite, where everyone who may write the file is one
principal, it is the OS user the publishing process ran as (``publisher_user``, from its
uid). Every read that asks :func:`core.team.placement.refusal` or
:func:`core.team.placement.waiting_text` about a revision selects :func:`wants_columns` and
builds its :class:`~core.team.placement.Wants` with :func:`wants_of`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import InstrumentedAttribute, Session

from core.ledger.models import Revision
from core.team.placement import Wants


def by_role(session: Session) -> bool:
    """Whether trust is decided on the database role (PostgreSQL) rather than the OS user."""
    return session.get_bind().dialect.name == "postgresql"


def trusted_publisher(session: Session) -> InstrumentedAttribute[str | None]:
    """The column trust is decided on: ``publisher_role`` on PostgreSQL, ``publisher_user`` on SQLite."""
    return Revision.publisher_role if by_role(session) else Revision.publisher_user


def wants_columns(session: Session) -> tuple[InstrumentedAttribute[Any], ...]:
    """What :func:`wants_of` reads of a revision: its text, its trusted publisher and its host."""
    return (Revision.spec_json, trusted_publisher(session), Revision.publisher_host)


def wants_of(session: Session, spec_json: str | None, publisher: str | None, host: str | None) -> Wants:
    """A revision's :class:`~core.team.placement.Wants` from the columns of :func:`wants_columns`."""
    return Wants.of_revision(spec_json, publisher, host, by_role(session))
