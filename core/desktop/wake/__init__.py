"""Waking the machine for a schedule's runs (``wakeSystem: true``).

One alarm per schedule, at its next due run minus :data:`~core.desktop.wake.alarms.LEAD`,
kept by the OS so that it fires while the machine sleeps: a transient systemd
user timer with ``WakeSystem=true`` (:mod:`core.desktop.wake.systemd_timer`), ``pmset
schedule wake`` on macOS (:mod:`core.desktop.wake.pmset`), or none, with the reason
(:class:`~core.desktop.wake.alarms.CannotWake`). :mod:`core.desktop.wake.probe` picks one per
host. Every OS call goes through a :data:`core.desktop.service_command.Runner` with a
timeout. This package imports only the basics and ``core.desktop.service_command``;
the engine's stage that keeps the alarms is :mod:`core.engine.wake`.
"""
