"""The engine: materialize, recover misfires, claim, run, record (docs/contract.md §4).

May import core/ledger/ and every package below it (docs/architecture.md), and
of core/desktop/ only wake/, notify/ and service_command.
"""
