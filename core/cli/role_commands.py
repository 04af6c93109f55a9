"""``schedctl db grant``: a database role with exactly the rights of a viewer, a publisher or an engine.

The policy and its SQL live in :mod:`core.ledger.roles`; this is the command around them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.cli.common import DB_ENV, EXIT_OK, UsageError
from core.cli.ledger_access import db_url
from core.cli.output import err, out

if TYPE_CHECKING:
    import argparse


def cmd_db_grant(args: argparse.Namespace) -> int:
    """Create or update ROLE so that it has exactly the rights of its kind on the ledger."""
    from core.ledger.roles import grant_role

    url = db_url(args)
    if url is None:
        raise UsageError(f"--db: name the PostgreSQL ledger (or set ${DB_ENV}); roles are PostgreSQL's")
    done = grant_role(url, args.role, args.kind)
    article = "an" if done.kind.value[0] in "aeiou" else "a"
    if done.created:
        out(f"created role {done.role!r} as {article} {done.kind.value}: it may log in and has no password yet")
        out(
            f"give it one as the owner in psql with \\password {_psql_name(done.role)}, "
            "or let pg_hba.conf authenticate it (peer, cert)"
        )
    else:
        exactly = "" if done.beyond else ", with exactly that kind's rights"
        out(f"role {done.role!r} is now {article} {done.kind.value}{exactly}")
    if done.beyond:
        err(
            f"schedctl db grant: warning: {done.role!r} also holds {'; '.join(done.beyond)}, through a role it "
            "belongs to or PUBLIC; db grant sets only the role's own rights: revoke them there"
        )
    return EXIT_OK


def _psql_name(name: str) -> str:
    """``name`` as psql reads it: quoted unless it is a plain lower-case identifier."""
    import re

    return name if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'
