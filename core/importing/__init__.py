"""Bringing schedules in from elsewhere: each source's reader and its translation to scheduleSpec.v1."""
