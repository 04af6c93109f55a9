"""Telling a person that something needs them: what is new (:mod:`core.desktop.notify.needs`),
the freedesktop notification service on the session bus (:mod:`core.desktop.notify.desktop_bus`),
the headless engine's notices (:mod:`core.desktop.notify.service_notices`), and an alert's message
and its delivery by webhook or mail (:mod:`core.desktop.notify.alert_message`,
:mod:`core.desktop.notify.alert_send`).

May import the basics, core/time/, core/team/ (alert routes, secrets) and core/desktop/'s entry.
The ledger and the engine call into it (the arrows up a layer in docs/architecture.md); only the
headless engine's notices read the ledger and the engine's presence back, imported inside the
functions that look, so that importing this package never loads them."""
