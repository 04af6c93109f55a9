"""Bringing schedules in from elsewhere: each source's reader and its translation to scheduleSpec.v1.

Around the engine (docs/architecture.md): may import core/engine/ and every package below it,
and the other packages of its layer (core/explain/, core/importing/, core/exporting/,
core/render/, core/desktop/).
"""
