"""Stable identities of occurrences (docs/contract.md §3).

The canonical form is ``json.dumps(x, separators=(",", ":"), ensure_ascii=False)``
in UTF-8. The ids hash only the schedule id, revision, nominal wall time, fold
ordinal and resolved instant: never the discovery time, host or attempt.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_PLAIN = re.compile(r"[a-z0-9._-]*")


def canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def occurrence_id(schedule_id: str, revision: int, nominal_local: str, fold_ordinal: int) -> str:
    """``occ-`` + sha256(canonical([scheduleId, revision, nominalLocal, foldOrdinal]))[:32]."""
    if _PLAIN.fullmatch(schedule_id):
        # Same bytes as canonical(); the values need no escaping, and this is the hot path.
        text = f'["{schedule_id}",{int(revision)},"{nominal_local}",{int(fold_ordinal)}]'
    else:
        text = canonical([schedule_id, revision, nominal_local, fold_ordinal])
    return "occ-" + _digest(text)


def logical_slot_id(schedule_id: str, resolved_utc: str | None) -> str | None:
    """``slot-`` + sha256(canonical([scheduleId, resolvedUtc]))[:32]; None without an instant."""
    if resolved_utc is None:
        return None
    if _PLAIN.fullmatch(schedule_id):
        text = f'["{schedule_id}","{resolved_utc}"]'
    else:
        text = canonical([schedule_id, resolved_utc])
    return "slot-" + _digest(text)


def jitter_seconds(occ_id: str, jitter_total_seconds: int) -> int:
    """The stable dispatch delay in ``[0, jitter)`` whole seconds for an occurrence."""
    if jitter_total_seconds <= 0:
        return 0
    h = int.from_bytes(hashlib.sha256(occ_id.encode("utf-8")).digest()[:8], "big")
    return h % jitter_total_seconds


class IdFactory:
    """Ids for many rows of one (schedule, revision): the canonical JSON prefix is
    hashed once, and each id copies that hash and feeds it the row's own bytes.
    Same bytes as the functions above."""

    __slots__ = ("_occ", "_slot")

    def __init__(self, schedule_id: str, revision: int) -> None:
        # canonical([sid, rev, nominal, ordinal]) == canonical([sid, rev])[:-1] + ',"' + nominal + '",' + ordinal + "]"
        # because nominal and resolved texts are plain ASCII digits and punctuation.
        self._occ = hashlib.sha256((canonical([schedule_id, int(revision)])[:-1] + ',"').encode())
        self._slot = hashlib.sha256((canonical([schedule_id])[:-1] + ',"').encode())

    def occurrence(self, nominal_local: str, fold_ordinal: int) -> str:
        h = self._occ.copy()
        h.update(f'{nominal_local}",{fold_ordinal}]'.encode())
        return "occ-" + h.hexdigest()[:32]

    def slot(self, resolved_utc: str) -> str:
        h = self._slot.copy()
        h.update(f'{resolved_utc}"]'.encode())
        return "slot-" + h.hexdigest()[:32]

    def row_ids(self, nominal_local: str, resolved_utc: str) -> tuple[str, str]:
        """The occurrence id of the first reading (fold 0) of ``nominal_local`` and the slot id of
        ``resolved_utc``: :meth:`occurrence` and :meth:`slot` in one call, for the rows of a long
        expansion."""
        occ = self._occ.copy()
        occ.update(f'{nominal_local}",0]'.encode())
        slot = self._slot.copy()
        slot.update(f'{resolved_utc}"]'.encode())
        return "occ-" + occ.hexdigest()[:32], "slot-" + slot.hexdigest()[:32]
