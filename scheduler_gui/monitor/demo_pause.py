"""The two demos that break on purpose stop after their first attention.

``nightly-backup`` always fails and ``inbox-sync`` always hangs: they are there
so that a failed run and an unknown effect show up in Needs attention soon
after the first start. Left running, each would add a card every 10 minutes
for good. Once one of them has an occurrence waiting for a person, the window
pauses it, with a note saying why (the schedule's history and its row in the
Schedules view show it). It is paused once: a person who resumes it keeps it
running, and a schedule of the same id that is not the demo (published from
another file, or a later revision) is never touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath

from PySide6.QtCore import QSettings

from core.ledger.queries import ScheduleSummary
from core.ledger.states import OccurrenceState, ScheduleState

#: The demos that break on purpose, with why, in the words of the pause's note.
BREAKING_DEMOS = {
    "nightly-backup": "it always fails",
    "inbox-sync": "it always hangs",
}
#: The settings key that remembers a demo was paused once (a person may resume it).
PAUSED_KEY = "demos/pausedOnce/{sid}"
_ATTENTION = (OccurrenceState.FAILED, OccurrenceState.UNKNOWN_EFFECT)


def pause_note(schedule_id: str) -> str:
    """``Paused by Tidemark after its first failure to show: this demo always fails on purpose …``."""
    why = BREAKING_DEMOS[schedule_id]
    return (
        f"Paused by Tidemark after its first run that needs attention: this demo breaks on purpose ({why}), "
        "and would add another card every 10 minutes. Resume it to watch it again."
    )


def demos_to_pause(summaries: Iterable[ScheduleSummary], settings: QSettings) -> list[str]:
    """The breaking demos, published from their demo file as revision 1, active, with an occurrence
    waiting for a person, and not paused once already."""
    out = []
    for s in summaries:
        if s.schedule_id not in BREAKING_DEMOS or s.state is not ScheduleState.ACTIVE or s.active_revision != 1:
            continue
        if s.source_path is not None and PurePath(s.source_path).stem != s.schedule_id:
            continue  # the id, published from some other file: not the demo
        if not any(s.counts.get(state, 0) for state in _ATTENTION):
            continue
        if settings.value(PAUSED_KEY.format(sid=s.schedule_id), False) in (True, "true"):
            continue
        out.append(s.schedule_id)
    return out


def remember_paused(settings: QSettings, schedule_ids: Iterable[str]) -> None:
    for sid in schedule_ids:
        settings.setValue(PAUSED_KEY.format(sid=sid), True)
    settings.sync()
