"""The report of a crontab import: for each line, in the crontab's order, what it became and why,
and for each job its runs at the zone's next gap and next fold, cron's and the spec's side by side."""

from __future__ import annotations

from datetime import datetime

from core.counts import counted
from core.importing.cron import CrontabImport, ImportedJob
from core.importing.cron_changes import change_lines, side_by_sides


def _job_lines(job: ImportedJob, now: datetime) -> list[str]:
    lines = [f"line {job.line}: {job.source}"]
    if len(job.specs) > 1:
        lines.append("  cron runs it on its days of the month OR its days of the week; one rule cannot say that:")
        lines.append("  two schedules, together exactly cron's days, no day twice")
    first = job.specs[0].spec
    kind = "wildcard job (minute or hour *)" if job.expr.wildcard else "fixed-time job"
    for imported in job.specs:
        lines.append(f"  wrote {imported.file_name}: {imported.spec.rule}")
    lines.append(
        f"  {job.zone} ({job.zone_from}); {kind}: gap {first.effective_gap_policy.value}, "
        f"fold {first.effective_fold_policy.value}, misfire {first.misfire_policy.value}"
    )
    if job.command.why_shell:
        lines.append(f"  runs through {job.command.argv[0]} -c: it has {', '.join(job.command.why_shell)}")
    if job.command.stdin is not None:
        lines.append("  the text after % is its standard input, each further % a line break, as in cron")
    views = side_by_sides(job.expr, [s.spec for s in job.specs], job.zone, now)
    if not views:
        lines.append(f"  {job.zone} has no clock change in the next ten years")
    for view in views:
        lines += ["  " + line for line in change_lines(view)]
    return lines


def report_lines(result: CrontabImport, now: datetime) -> list[str]:
    """Every line of the report, the crontab's lines in order."""
    said: list[tuple[int, list[str]]] = []
    for job in result.jobs:
        said.append((job.line, _job_lines(job, now)))
    for item in result.unimported:
        said.append((item.line, [f"line {item.line}: {item.source}: not imported: {item.reason}"]))
    for env in result.env_lines:
        said.append((env.line, [f"line {env.line}: {env.name}: set in the task env of every job below it"]))
    lines = [line for _, block in sorted(said, key=lambda pair: pair[0]) for line in block]
    files = sum(len(job.specs) for job in result.jobs)
    lines.append(
        f"{counted(len(result.jobs), 'job')} imported into {counted(files, 'file')}; "
        f"{counted(len(result.unimported), 'line')} not imported"
        + (f"; {counted(len(result.refused), 'line')} refused" if result.refused else "")
    )
    return lines
