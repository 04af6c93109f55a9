"""The engine: materialize, recover misfires, claim, run, record (CONTRACT §4)."""
