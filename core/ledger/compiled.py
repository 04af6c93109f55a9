"""A stored revision's compiled schedule, cached: the text of a revision never changes.

Materialization, the queries that show a schedule's next run, the engine's
admin actions and the future diff all read revisions this way. It sits apart
from :mod:`core.ledger.materialize` so that the queries can use it without
importing materialization (which reads the queries' filters).
"""

from __future__ import annotations

import json
from functools import lru_cache

from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.spec_validation import parse_spec


@lru_cache(maxsize=256)
def compiled_revision(spec_json: str) -> CompiledSchedule:
    """The compiled form of a stored revision (cached: the text never changes)."""
    spec = parse_spec(json.loads(spec_json), check_rule=False)
    return compile_schedule(spec)
