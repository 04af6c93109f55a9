"""The monitor: the live ledger's schedules, occurrences, the queue of effects
that need a person, and the ledger's health.

May import the window's other parts, the shared modules at scheduler_gui's root (not the
application: app, main_window, status_bar, screenshot) and any core package but core/cli/.
"""
