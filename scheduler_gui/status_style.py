"""The status vocabulary of the window: a glyph, a word and a colour for every
preview status and ledger state, so colour is never the only signal.

Colours are the Okabe–Ito palette, readable by people with colour-blindness;
``None`` means the palette's ordinary text colour.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor

ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#8C8C8C"


@dataclass(frozen=True)
class Look:
    glyph: str
    word: str
    colour: str | None
    hollow: bool = False

    def qcolor(self) -> QColor | None:
        return QColor(self.colour) if self.colour else None

    @property
    def label(self) -> str:
        return f"{self.glyph} {self.word}"


_SKIPPED = GREY
LOOKS: dict[str, Look] = {
    # preview statuses (core.enums.Status)
    "SCHEDULED": Look("✓", "scheduled", None),
    "SHIFTED": Look("↷", "shifted", ORANGE),
    "SECOND_READING": Look("②", "second reading", BLUE),
    "SKIPPED_GAP": Look("⊘", "skipped: gap", _SKIPPED, hollow=True),
    "SKIPPED_FOLD": Look("⊘", "skipped: repeat", _SKIPPED, hollow=True),
    "SKIPPED_DUPLICATE": Look("⊘", "skipped: duplicate", _SKIPPED, hollow=True),
    "EXCLUDED": Look("⊘", "excluded", _SKIPPED, hollow=True),
    # ledger states (core.ledger.states.OccurrenceState)
    "PLANNED": Look("○", "planned", None),
    "DUE": Look("◔", "due", None),
    "DISPATCHING": Look("▶", "starting", SKY_BLUE),
    "RUNNING": Look("▶", "running", SKY_BLUE),
    "SUCCEEDED": Look("✔", "succeeded", BLUISH_GREEN),
    "RETRY_WAIT": Look("↻", "retry wait", ORANGE),
    "FAILED": Look("✖", "failed", VERMILLION),
    "UNKNOWN_EFFECT": Look("?", "unknown effect", REDDISH_PURPLE),
    "SKIPPED_OVERLAP": Look("⊘", "skipped: overlap", _SKIPPED, hollow=True),
    "MISFIRE_EXPIRED": Look("⊘", "misfire expired", _SKIPPED, hollow=True),
    "CANCELLED": Look("⊘", "cancelled", _SKIPPED, hollow=True),
}


def look(status: str, *, fold_ordinal: int = 0) -> Look:
    """The look of a status (or state) name; a runnable second reading of a fold gets its own."""
    if fold_ordinal == 1 and status in ("SCHEDULED", "SHIFTED"):
        return LOOKS["SECOND_READING"]
    return LOOKS.get(status, Look("•", status.lower().replace("_", " "), None))
