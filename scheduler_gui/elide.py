"""Text cut to the room it has at a word's end, never in the middle of one."""

from __future__ import annotations

from collections.abc import Callable


def whole_words(text: str, room: int, advance: Callable[[str], int]) -> str:
    """``text`` if it fits in ``room`` pixels, else as many of its first words as fit with "…" after
    them (never a word cut in two): "Next inbox-sync: Wed 2027-03-03…"."""
    if advance(text) <= room:
        return text
    words = text.split(" ")
    for end in range(len(words) - 1, 0, -1):
        shown = " ".join(words[:end]).rstrip(" ·:") + "…"
        if advance(shown) <= room:
            return shown
    return words[0] + "…"
