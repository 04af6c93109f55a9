"""Entry point of the desktop app (``scheduler-gui``).

The window itself is the designer issue's work; until it lands this entry
point says so plainly instead of pretending, and points at ``schedctl``.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print(
        "The Tidemark window is not part of this build yet.\n"
        "Use `schedctl preview resources/demo/daily-ops-summary.yaml` to see a schedule.",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
