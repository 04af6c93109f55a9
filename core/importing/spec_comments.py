"""A new spec file's text with a comment above each key that says why it holds what it holds.

The text is :func:`core.spec.files.dump_yaml`'s (block style, the contract's key order); each
comment goes on the line above its top-level key, and a header comment above everything. The
result is read back and must hold exactly the document: comments never change the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.spec.files import dump_yaml, load_text
from core.spec.roundtrip import same


def comment_text(text: str) -> str:
    """``text`` fit for a one-line YAML comment: no line breaks, nothing a reader refuses."""
    return "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))


def commented_yaml(document: Mapping[str, Any], header: str, why: Mapping[str, str]) -> str:
    """``document`` as a new YAML file, ``header`` on top and ``why[key]`` above each top-level key."""
    lines = [f"# {comment_text(header)}"]
    for line in dump_yaml(document).splitlines():
        key = line.split(":", 1)[0] if line[:1].isalpha() else ""
        if key in why:
            lines.append(f"# {comment_text(why[key])}")
        lines.append(line)
    text = "\n".join(lines) + "\n"
    if not same(load_text(text), dict(document)):
        raise AssertionError("a comment changed what the spec file holds")  # a bug: comments are whole lines
    return text
