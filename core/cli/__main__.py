"""``python -m core.cli``: the same program as the ``schedctl`` console script."""

from core.cli.app import main

raise SystemExit(main())
