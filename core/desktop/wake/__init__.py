"""Waking the machine for a schedule's runs (``wakeSystem: true``).

One alarm per schedule, at its next due run minus :data:`~core.wake.alarms.LEAD`,
kept by the OS so that it fires while the machine sleeps: a transient systemd
user timer with ``WakeSystem=true`` (:mod:`core.wake.systemd_timer`), ``pmset
schedule wake`` on macOS (:mod:`core.wake.pmset`), or none, with the reason
(:class:`~core.wake.alarms.CannotWake`). :mod:`core.wake.probe` picks one per
host. Every OS call goes through a :data:`core.service_command.Runner` with a
timeout. This package imports only the basics and ``core.service_command``;
the engine's stage that keeps the alarms is :mod:`core.engine.wake`.
"""
