"""Pin or follow the tz database (spec key ``tzdbPolicy``), in words.

Under FOLLOW a revision's occurrences that are not materialized yet resolve
with the installed tzdata, so they follow a government's change of its rules
once tzdata ships it. Under PIN, publishing stores the zone's compiled TZif
bytes with the revision and every resolution of it uses them, on every host,
whatever tzdata is installed (docs/spec.md, "Pin or follow the tz database").
Materialized occurrences are facts under both: a tzdata change never moves them.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.enums import TzdbPolicy


def policy_of(data: Mapping[str, object]) -> TzdbPolicy:
    """The policy of a spec's canonical dict (a revision stored before the key existed: FOLLOW)."""
    return TzdbPolicy(str(data.get("tzdbPolicy") or TzdbPolicy.FOLLOW.value))


def policy_words(data: Mapping[str, object]) -> str:
    """``follows the installed tz database``, or ``pinned to tz database 2026a`` (a canonical dict)."""
    if policy_of(data) is TzdbPolicy.PIN:
        return f"pinned to tz database {data.get('tzdbVersion')}"
    return "follows the installed tz database"


def consequence(policy: TzdbPolicy, zone: str, version: str) -> str:
    """What the policy means for a schedule in ``zone``, with tzdata ``version`` installed, in one sentence."""
    if policy is TzdbPolicy.PIN:
        return (
            f"Runs by {zone}'s rules as tz database {version} has them, on every machine; "
            "a later change of the law moves nothing until you republish."
        )
    return (
        f"Runs by {zone}'s rules as the installed tz database has them (now {version}); "
        "when a government changes them, runs not yet planned follow."
    )
