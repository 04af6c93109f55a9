"""Shadow's report for people and programs (``schedctl shadow``): a summary line,
then one line per difference (schedule, occurrence, what differs: the ledger's
value → the recomputed one), or the report as JSON (``shadow.v1``).

Values come from specs and the ledger (a reason may hold anything): each cell is
escaped with :func:`~core.render.terminal.terminal_safe` and kept on one line.
"""

from __future__ import annotations

import json

from core.counts import counted
from core.ledger.shadow import ShadowDifference, ShadowReport
from core.render.terminal import terminal_safe
from core.time.formats import fmt_utc

_ASCII = str.maketrans({"—": "-", "→": "->", "·": "|"})
_ABSENT = "—"


_count = counted  # the tables' one way to count


def _cell(text: str | None) -> str:
    return " ".join(terminal_safe(text).split()) if text is not None else _ABSENT


def summary_line(report: ShadowReport) -> str:
    """``equal: 6 schedules, 120 future occurrences compute as the ledger holds them (tzdb 2026f, at …)``."""
    compared = sum(s.compared for s in report.schedules)
    holidays = f", holidays {report.holidays_version}" if report.holidays_version is not None else ""
    where = f"tzdb {report.tzdb_version}{holidays}, at {fmt_utc(report.at)}"
    what = f"{_count(len(report.schedules), 'schedule')}, {_count(compared, 'future occurrence')}"
    if report.equal:
        return f"equal: {what} compute as the ledger holds them ({where})"
    schedules = len(
        {d.schedule_id for d in report.differences} | {s.schedule_id for s in report.schedules if s.unreadable}
    )
    return (
        f"different: {_count(len(report.differences), 'difference')} in {_count(schedules, 'schedule')} "
        f"({what} compared; {where}); the ledger keeps what it holds"
    )


def difference_line(d: ShadowDifference) -> str:
    """``daily-ops-summary occ-… 2026-03-09T02:30:00#0 resolvedUtc: 2026-03-09T06:30:00Z → 2026-03-09T07:30:00Z``."""
    head = f"{_cell(d.schedule_id)}  {_cell(d.occurrence_id)}  {_cell(d.nominal_local)}#{d.fold_ordinal}"
    return f"{head}  {d.what}: {_cell(d.ledger)} → {_cell(d.recomputed)}"


def shadow_table(report: ShadowReport, *, unicode: bool = True) -> str:
    """The summary line, then the differences, one a line (ledger value → recomputed value)."""
    lines = [summary_line(report), *(f"  {difference_line(d)}" for d in report.differences)]
    lines += [
        f"not compared: {_cell(s.schedule_id)}: a revision this Tidemark cannot read ({_cell(s.unreadable)})"
        for s in report.schedules
        if s.unreadable is not None
    ]
    text = "\n".join(lines) + "\n"
    return text if unicode else text.translate(_ASCII)


def shadow_json(report: ShadowReport) -> str:
    """The report as ``shadow.v1`` JSON."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False)
