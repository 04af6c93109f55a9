"""Recurrence: rule parsing, expansion on the wall clock, and resolution to instants."""
