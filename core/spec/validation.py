"""Validating a scheduleSpec.v1 document: parse -> validate -> compile.

:func:`parse_spec` takes a loaded mapping and returns a
:class:`~core.spec.model.ScheduleSpec`, or raises :class:`~core.errors.SpecError`
naming every problem at once, each by its key, with "did you mean" for an
unknown key. :func:`semantic_problems` holds the checks that need the whole
document, among them that the rule compiles (the recurrence code's work).
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from core.calendar.business_days import SEARCH_DAYS, BusinessDays, longest_closure
from core.enums import HolidayPolicy, Kind, MisfirePolicy
from core.errors import Problem, SpecError, UserError
from core.os_text import key_text, shown, string_problem, task_problems, text_problems
from core.recurrence.compile import compile_schedule
from core.recurrence.rules import RuleError, parse_rule
from core.spec.model import KIND_KEYS, SCHEMA_NAME, AlertRoute, ScheduleSpec
from core.time.formats import fmt_local, fmt_utc


def _known_keys(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """Each key of ``model`` with the model it holds, if one (``retry``; ``task`` and
    ``businessCalendar``, which may be left out, too), so that its own keys are checked by name."""
    out: dict[str, type[BaseModel] | None] = {}
    for name, info in model.model_fields.items():
        alias = info.alias or name
        kinds = [k for k in typing.get_args(info.annotation) if k is not type(None)] or [info.annotation]
        ann = kinds[0] if len(kinds) == 1 else None
        out[alias] = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return out


def _unknown_key_problems(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[Problem]:
    problems: list[Problem] = []
    known = _known_keys(model)
    for key, value in data.items():
        if not isinstance(key, str):
            problems.append(Problem(prefix.rstrip(".") or "(top level)", f"keys must be text, got {shown(key)}"))
            continue
        if string_problem(key):
            continue  # reported by text_problems
        if key not in known:
            from difflib import get_close_matches  # a near match, for a name that is wrong

            close = get_close_matches(key, list(known), n=1, cutoff=0.6)
            if not close:
                lowered = {k.lower(): k for k in known}
                if key.lower().replace("_", "") in lowered:
                    close = [lowered[key.lower().replace("_", "")]]
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(Problem(prefix + key_text(key), f"unknown key{hint}"))
        elif model is ScheduleSpec and key == "alerts" and isinstance(value, list):
            for i, route in enumerate(value):
                if isinstance(route, dict):
                    problems.extend(_unknown_key_problems(route, AlertRoute, f"{prefix}alerts[{i}]."))
        elif known[key] is not None and isinstance(value, dict):
            sub = known[key]
            assert sub is not None
            problems.extend(_unknown_key_problems(value, sub, prefix + key + "."))
    return problems


def _loc(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item.startswith("function-") or item in ("lax-or-strict", "json-or-python"):
            continue
        else:
            parts.append(("." if parts else "") + key_text(item))
    return "".join(parts)


def _clean(msg: str) -> str:
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


_REQUIRED_WHY = {
    "gapPolicy": "there is no silent default: choose SKIP, SHIFT_FORWARD or SHIFT_BY_GAP",
    "foldPolicy": "there is no silent default: choose FIRST_ONLY, SECOND_ONLY or BOTH",
}
#: Why a kind refuses a key, where "does not apply" alone would leave a person guessing.
_FORBIDDEN_WHY = {
    (Kind.INTERVAL, "businessCalendar"): "an interval counts elapsed time from its anchor, so it has no "
    "nominal dates to keep off holidays; use a calendar rule",
    (Kind.AFTER_COMPLETION, "businessCalendar"): "each run follows the previous one's completion, so it has no "
    "nominal dates to keep off holidays; use a calendar rule",
}
_HOLIDAY_POLICIES = "SKIP, NEXT_BUSINESS_DAY or PREVIOUS_BUSINESS_DAY"


def _a(kind: Kind) -> str:
    """``a calendar``, ``an interval``, ``an after_completion``."""
    return ("an " if kind.value[0] in "aeiou" else "a ") + kind.value


def _kind_problems(data: dict[str, Any]) -> list[Problem]:
    raw_kind = data.get("kind", "calendar")
    try:
        kind = Kind(raw_kind)
    except ValueError:
        return []  # reported by the model
    required, forbidden = KIND_KEYS[kind]
    problems = []
    for key in sorted(required):
        if data.get(key) is None:
            why = _REQUIRED_WHY.get(key, "")
            problems.append(Problem(key, f"required for {_a(kind)} schedule" + (f"; {why}" if why else "")))
    for key in sorted(forbidden):
        if key in data and data[key] is not None:
            why = _FORBIDDEN_WHY.get((kind, key), "remove it")
            problems.append(Problem(key, f"does not apply to {_a(kind)} schedule; {why}"))
    if kind is Kind.CALENDAR:
        problems += _holiday_policy_problems(data)
    policy = data.get("misfirePolicy")
    if policy == MisfirePolicy.CATCH_UP_BOUNDED.value and data.get("maxCatchUp") is None:
        problems.append(
            Problem("maxCatchUp", "required with misfirePolicy CATCH_UP_BOUNDED (how many missed runs to catch up)")
        )
    if policy not in (None, MisfirePolicy.CATCH_UP_BOUNDED.value) and data.get("maxCatchUp") is not None:
        problems.append(Problem("maxCatchUp", f"only applies with misfirePolicy CATCH_UP_BOUNDED, not {shown(policy)}"))
    return problems


def _holiday_policy_problems(data: dict[str, Any]) -> list[Problem]:
    """holidayPolicy goes with businessCalendar: required with it (no silent default), refused without it."""
    calendar, policy = data.get("businessCalendar"), data.get("holidayPolicy")
    if calendar is not None and policy is None:
        return [
            Problem(
                "holidayPolicy",
                f"required with businessCalendar; there is no silent default: choose {_HOLIDAY_POLICIES}",
            )
        ]
    if calendar is None and policy is not None:
        return [
            Problem("holidayPolicy", "only applies with a businessCalendar (which days are business days); add one")
        ]
    return []


def parse_spec(data: Any, source: str | None = None, *, check_rule: bool = True) -> ScheduleSpec:
    """Validate a loaded document. Raises :class:`SpecError` listing every problem."""
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "nothing"
        raise SpecError([Problem("", f"a spec is a mapping of keys to values, but this holds {kind}")], source)
    # Text no program or ledger can take is reported alone for its key: it is the one thing to fix there.
    problems = [Problem(key, why) for key, why in text_problems(data)]
    problems += [Problem(key, why) for key, why in task_problems(data.get("task"))]
    refused = {p.key for p in problems}
    problems += _unknown_key_problems(data, ScheduleSpec)
    problems += _kind_problems(data)
    spec: ScheduleSpec | None = None
    try:
        spec = ScheduleSpec.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            if err["type"] == "extra_forbidden":
                continue  # reported above, with a suggestion
            key = _loc(err["loc"])
            if key in refused:
                continue
            if err["type"] == "missing":
                problems.append(Problem(key, "required"))
            elif err["type"] == "literal_error" and key == "schema":
                problems.append(Problem(key, f"must be {SCHEMA_NAME!r}, got {shown(err.get('input'))}"))
            else:
                problems.append(Problem(key, _clean(err["msg"])))
    if spec is not None and not problems and check_rule:
        problems += semantic_problems(spec)
    elif problems and check_rule and isinstance(data.get("rule"), str) and all(p.key != "rule" for p in problems):
        # The rest cannot be compiled, but the rule's own syntax can still be
        # checked, so that every problem is reported at once.
        problems += _rule_text_problems(data["rule"])
    if problems:
        raise SpecError(list(dict.fromkeys(problems)), source)
    assert spec is not None
    return spec


def _rule_text_problems(text: str) -> list[Problem]:
    try:
        parse_rule(text)
    except RuleError as exc:
        return [Problem("rule", str(exc))]
    return []


def semantic_problems(spec: ScheduleSpec) -> list[Problem]:
    """Checks that need the whole spec: the rule compiles and yields, bounds make sense."""
    problems: list[Problem] = []
    if spec.end is not None and spec.end.tzinfo is None and spec.start is not None and spec.end < spec.start:
        problems.append(Problem("end", f"is before start ({fmt_local(spec.start)})"))
    if spec.kind is Kind.INTERVAL and spec.end is not None and spec.anchor is not None:  # noqa: SIM102
        if spec.end.tzinfo is not None and spec.end < spec.anchor:
            problems.append(Problem("end", f"is before anchor ({fmt_utc(spec.anchor)})"))
    if spec.retry.max_backoff < spec.retry.initial_backoff:
        problems.append(Problem("retry.maxBackoff", "is shorter than retry.initialBackoff"))
    if problems:
        return problems
    try:
        compiled = compile_schedule(spec)
    except SpecError as exc:
        problems.extend(exc.problems)
    except UserError as exc:
        problems.append(Problem("rule", str(exc)))
    else:
        problems += _closure_problems(compiled.business_days)
    return problems


def _closure_problems(days: BusinessDays | None) -> list[Problem]:
    """A calendar that closes more days in a row than a move looks through: a run's date
    moved to the next or previous business day would find none (expansion would stop)."""
    if days is None or days.policy is HolidayPolicy.SKIP:
        return []
    found = longest_closure(days)
    if found is None:
        return []
    first, _ = found
    return [
        Problem(
            "businessCalendar.closed",
            f"closes more than {SEARCH_DAYS} days in a row from {first.isoformat()} (with the weekend and "
            f"holidays); a run is moved at most {SEARCH_DAYS} days to a business day, so close at most "
            f"{SEARCH_DAYS} days in a row, or use holidayPolicy SKIP",
        )
    ]
