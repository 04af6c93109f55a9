"""``schedctl drift`` after a newer Tidemark's first start found schedules it computes
otherwise (core.engine.first_start): each waits with its words, ``--keep`` records
the decision with the version, a second ``--keep`` is refused in one line."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from code_change import reword_gaps

from core.clock import FixedClock
from core.engine.first_start import FirstStart, shadow_new_version
from core.ledger import open_ledger

from .test_cli_ledger import SID, Session


@pytest.fixture
def cli(ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Session:
    return Session(ledger_url, capsys, tmp_path)


def test_drift_lists_and_keeps_what_a_new_version_computes_otherwise(
    cli: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli.ok("apply", cli.spec(horizon="P10D"))
    cli.ok("engine", "run", "--once")
    clock = FixedClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    ledger = open_ledger(cli.url)
    try:
        shadow_new_version(ledger, clock, "0.1.0", FirstStart())
        reword_gaps(monkeypatch)
        assert shadow_new_version(ledger, clock, "0.2.0", FirstStart()).differing == (SID,)
    finally:
        ledger.close()
    assert cli.ok("drift").splitlines()[-1] == (
        f"{SID} waits for a decision: Tidemark 0.2.0 computes 1 future run otherwise than 0.1.0; "
        f"republish to follow (schedctl drift --keep {SID}, or --republish {SID})"
    )
    assert cli.ok("drift", "--keep", SID, "--note", "same runs") == (
        f"kept 1 run of {SID} as materialized (Tidemark 0.2.0 computes them otherwise)\n"
    )
    assert SID not in cli.ok("drift")
    assert cli.refused("drift", "--keep", SID) == (
        f"schedctl drift: {SID}: no drift waits for a decision (see schedctl drift)"
    )
