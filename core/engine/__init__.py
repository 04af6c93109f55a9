"""The engine: materialize, recover misfires, claim, run, record (docs/contract.md §4)."""
