"""The monitor: the live ledger's schedules, occurrences, the queue of effects
that need a person, and the ledger's health."""
