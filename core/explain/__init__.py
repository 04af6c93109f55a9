"""A schedule explained to a person: the summary sentences (summary), what each
clock-change policy does to it (consequences) with the words for wall times at a
change (change_words), and what happens when the machine comes back after being
off (whatif, which asks the engine's own misfire decision).

A package of its own rather than part of core/render/: render/ writes rows in a
format (table, JSON, CSV, iCalendar) and reasons about nothing, while these
modules read a schedule and hand back words; whatif needs the engine, which
render/ never imports.

Around the engine (docs/architecture.md): may import core/engine/ and every package below it,
and the other packages of its layer (core/explain/, core/importing/, core/exporting/,
core/render/, core/desktop/).
"""
