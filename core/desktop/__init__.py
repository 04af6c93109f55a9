"""Tidemark on a person's machine: the applications-menu entry and autostart
(entry), the engine as a systemd user service or a launchd agent (service,
launchd, service_command), the files shipped beside the code (bundled), telling
a person (notify/) and waking the machine (wake/).

Around the engine (docs/architecture.md): may import core/engine/ and every package below it,
and the other packages of its layer (core/explain/, core/importing/, core/exporting/,
core/render/, core/desktop/).

Three lower packages reach in, and only for these: core/recurrence/ for wake/
(the preview says when the machine is woken), core/ledger/ for notify/ (what
needs a person) and core/engine/ for wake/, notify/ and service_command (the
alarms it keeps, the alerts it sends, the ledger's variable in a task's
environment).
"""
