"""Telling a person that something needs them: what is new (:mod:`core.desktop.notify.needs`),
the freedesktop notification service on the session bus (:mod:`core.desktop.notify.desktop_bus`)
and the headless engine's notices (:mod:`core.desktop.notify.service_notices`)."""
