"""The newest Tidemark version that has run an engine on a ledger (``ledger_meta.engine_version``).

An engine reads it when it starts: a version it has not seen before on this
ledger is "the first start of a new version", and the engine then writes its
own version (:func:`record_engine_version`). None means no engine has recorded
one yet (a ledger from before migration 0009, or one no engine has run on).
Whether one version is newer than another is the caller's to decide.
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.ledger.models import LedgerMeta


def ledger_engine_version(session: Session) -> str | None:
    """The version recorded in ``ledger_meta``, or None when none was."""
    return session.scalar(select(LedgerMeta.engine_version).where(LedgerMeta.id == 1))


def record_engine_version(session: Session, version: str) -> None:
    """Record ``version`` as the newest Tidemark that has run an engine on this ledger.

    Run inside a write transaction (:meth:`Ledger.write`); on PostgreSQL the engine
    role may update this column of ``ledger_meta`` and no other.
    """
    session.execute(update(LedgerMeta).where(LedgerMeta.id == 1).values(engine_version=version))
