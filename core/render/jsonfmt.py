"""``preview.v1`` as indented JSON: exactly :meth:`Preview.to_json`."""

from __future__ import annotations

import json

from core.preview import Preview


def render_json(preview: Preview) -> str:
    """The contract's preview object, indented by two spaces, ending in a newline."""
    return json.dumps(preview.to_json(), indent=2, ensure_ascii=False) + "\n"
