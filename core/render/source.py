"""What every renderer reads: a preview, whole or streamed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime

    from core.recurrence.occurrence import Occurrence
    from core.spec.model import ScheduleSpec
    from core.time.zones import Transition


class Source(Protocol):
    """What a renderer reads: a :class:`~core.recurrence.preview.Preview` or a
    :class:`~core.recurrence.preview.PreviewStream`."""

    @property
    def spec(self) -> ScheduleSpec: ...

    @property
    def rows(self) -> Iterable[Occurrence]: ...

    @property
    def tzdb_version(self) -> str: ...

    def transitions_in(self, lo: datetime, hi: datetime) -> list[Transition]: ...
