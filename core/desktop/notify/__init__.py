"""Telling a person that something needs them: what is new (:mod:`core.notify.needs`),
the freedesktop notification service on the session bus (:mod:`core.notify.desktop_bus`)
and the headless engine's notices (:mod:`core.notify.service_notices`)."""
