"""What expanding, materializing and running a revision read of its spec, kept without the models.

An engine keeps every live revision compiled (:mod:`core.ledger.compiled`); the validated
:class:`~core.spec.model.ScheduleSpec` behind one costs about 2 KiB of pydantic models and their
dicts, of which expansion reads a dozen values. A compiled revision keeps these instead and lets
the models go; whoever needs the whole spec (an explanation, the window) asks for it again.
The engine's claims, outcomes and recovery read :class:`RunFacts`: the task is the one model kept.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from core.enums import FoldPolicy, GapPolicy, InvalidDatePolicy, Kind, MisfirePolicy, OverlapPolicy
from core.spec.model import Retry, ScheduleSpec, Task


@dataclass(frozen=True, slots=True)
class SpecFacts:
    """The values of a spec that expansion, materialization and the misfire step read, each as the
    spec holds it (the policies as they take effect)."""

    schedule_id: str
    revision: int
    time_zone: str
    kind: Kind
    start: datetime | None
    every: timedelta | None
    anchor: datetime | None
    delay: timedelta | None
    jitter: timedelta
    horizon: timedelta
    lateness_window: timedelta
    catch_up_window: timedelta | None
    misfire_policy: MisfirePolicy
    effective_max_catch_up: int | None
    business_period: str | None
    invalid_date_policy: InvalidDatePolicy
    gap_policy: GapPolicy
    fold_policy: FoldPolicy

    @classmethod
    def of(cls, spec: ScheduleSpec) -> SpecFacts:
        """The facts of ``spec``: its own values, not copies (a cache's shared strings stay shared)."""
        return cls(
            spec.schedule_id,
            spec.revision,
            spec.time_zone,
            spec.kind,
            spec.start,
            spec.every,
            spec.anchor,
            spec.delay,
            spec.jitter,
            spec.horizon,
            spec.lateness_window,
            spec.catch_up_window,
            spec.misfire_policy,
            spec.effective_max_catch_up,
            spec.business_period,
            spec.invalid_date_policy,
            spec.effective_gap_policy,
            spec.effective_fold_policy,
        )


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What claiming, settling and recovering a revision's runs read of its spec: its task (the
    only model kept), retry (shared by equal ones), overlap policy and, for an after_completion
    schedule's next appointment, its kind, delay and business period."""

    schedule_id: str
    revision: int
    kind: Kind
    task: Task | None
    retry: Retry
    overlap_policy: OverlapPolicy
    delay: timedelta | None
    business_period: str | None

    @classmethod
    def of(cls, spec: ScheduleSpec) -> RunFacts:
        """The run facts of ``spec``: its own values and models (each named as the spec names it), not copies."""
        values: dict[str, Any] = {field.name: getattr(spec, field.name) for field in fields(cls)}
        return cls(**values)
