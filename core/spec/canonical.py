"""The canonical form of a schedule: the text a published revision stores.

:func:`canonical_dict` writes every default explicit, the rule normalized, in
the contract's key order (:data:`KEY_ORDER`), so that two documents meaning the
same schedule store the same text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.enums import AlertKind, Kind
from core.recurrence.rules import normalize_rule_text
from core.spec.model import KIND_KEYS, ScheduleSpec
from core.time.formats import fmt_utc
from core.time.zones import tzdb_version

KEY_ORDER = [
    "schema",
    "scheduleId",
    "revision",
    "title",
    "timeZone",
    "tzdbVersion",
    "tzdbPolicy",
    "kind",
    "rule",
    "start",
    "every",
    "anchor",
    "delay",
    "end",
    "exclude",
    "businessCalendar",
    "holidayPolicy",
    "gapPolicy",
    "foldPolicy",
    "invalidDatePolicy",
    "misfirePolicy",
    "maxCatchUp",
    "latenessWindow",
    "catchUpWindow",
    "jitter",
    "overlapPolicy",
    "retry",
    "cutoverAt",
    "horizon",
    "businessPeriod",
    "runsOn",
    "wakeSystem",
    "alerts",
    "task",
]


def canonical_dict(spec: ScheduleSpec, *, cutover_at: datetime | None = None, fill_tzdb: bool = True) -> dict[str, Any]:
    """The spec with every default explicit, in a fixed key order (what a revision stores).

    ``cutover_at`` fills an absent cutoverAt (the moment of publishing);
    ``fill_tzdb`` fills an absent tzdbVersion with the installed one.
    """
    raw = spec.model_dump(mode="json", by_alias=True)
    kind = spec.kind
    if kind is not Kind.INTERVAL:
        raw["gapPolicy"] = spec.effective_gap_policy.value
        raw["foldPolicy"] = spec.effective_fold_policy.value
    raw["maxCatchUp"] = spec.effective_max_catch_up
    if fill_tzdb and not raw.get("tzdbVersion"):
        raw["tzdbVersion"] = tzdb_version()
    if raw.get("cutoverAt") is None and cutover_at is not None:
        raw["cutoverAt"] = fmt_utc(cutover_at)
    for route in raw.get("alerts") or []:
        route["on"] = [kind.value for kind in AlertKind if kind.value in route["on"]]
    if raw.get("rule"):
        raw["rule"] = normalize_rule_text(raw["rule"])
    _, forbidden = KIND_KEYS[kind]
    out: dict[str, Any] = {}
    for key in KEY_ORDER:
        if key in forbidden:
            continue
        if kind is Kind.INTERVAL and key in ("invalidDatePolicy",):
            continue
        value = raw.get(key)
        if key in ("maxCatchUp", "runsOn", "alerts", "businessCalendar", "holidayPolicy") and value is None:
            continue
        out[key] = value
    return out
