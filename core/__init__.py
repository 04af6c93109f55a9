"""Tidemark's headless core: no Qt, no window (docs/architecture.md maps it).

The basics live at this root and import none of core's packages: the injected
clock (clock), the errors (errors), the enumerations (enums), ids (identity),
the version (version), counts in words (counts) and the text the OS and the
ledger can carry (os_text). Every package opens with what it holds and what it
may import; tests/test_layers.py keeps those directions.
"""
