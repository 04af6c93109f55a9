"""How much a spec file may hold: the bounds reading one keeps against hostile input.

Spec files come from anywhere (a colleague, a download). :mod:`core.spec.files` reads at most
:data:`MAX_SPEC_BYTES` and refuses JSON nested deeper than :data:`MAX_SPEC_DEPTH`;
:mod:`core.spec.yaml_text` keeps all four for YAML, whose aliases (``*name``) can make a small file
expand into a huge document ("billion laughs").
"""

from __future__ import annotations

MAX_SPEC_BYTES = 1_000_000
#: A spec nests four levels (the spec, task, env, a value); anything this deep is not a spec.
MAX_SPEC_DEPTH = 32
#: Keys and values counted with every alias expanded; real specs hold a few hundred.
MAX_SPEC_VALUES = 100_000
#: Aliases (``*name``) in one file; a spec has no use for more than a handful.
MAX_SPEC_ALIASES = 100
