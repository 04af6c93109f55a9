"""Recurrence: rule parsing, expansion on the wall clock, and resolution to instants;
an expansion's rows (occurrence) and the preview built from them (preview).

The schedule layer (docs/architecture.md): may import core/spec/, core/calendar/,
core/team/, core/time/ and the basics, and of core/desktop/ only wake/ (the
preview says when the machine is woken).
"""
