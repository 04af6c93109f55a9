"""Schedules written for other schedulers: a crontab (crontab, cron_line,
cron_fields) and systemd timer units (systemd, unit_syntax), with the clock
changes they cannot follow (clock_changes) and the reasons a schedule cannot be
written (refusal).

Around the engine (docs/architecture.md): may import core/engine/ and every package below it,
and the other packages of its layer (core/explain/, core/importing/, core/exporting/,
core/render/, core/desktop/).
"""
