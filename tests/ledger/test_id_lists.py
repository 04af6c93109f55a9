"""Lists of ids as one condition (:mod:`core.ledger.id_lists`): the same rows as ``in_()`` on both
databases, and on SQLite one SQL text whatever the list's length, so that the driver's cache of
prepared statements holds one small entry, not one per length."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select, tuple_

from core.clock import FixedClock
from core.engine.context import PassReport
from core.engine.promote import promote
from core.ledger.db import Ledger
from core.ledger.id_lists import among, among_pairs
from core.ledger.materialize import draft_many

from . import NOW
from .test_pass_cost import MINUTELY, publish_many
from .test_recovery_cost import statements

ODD = ["plain", "it's", 'say "hi"', "back\\slash", "per%cent", "a b", "zürich-läuft", "東京", "🙂", "[0]", "$.x", "--;"]
PLAIN = [f"s{i:04}" for i in range(1200)]
_PROBES = MetaData()
PROBE = Table(
    "id_list_probe", _PROBES, Column("id", String(64), primary_key=True), Column("n", Integer, primary_key=True)
)


@pytest.fixture
def probe(ledger: Ledger) -> Iterator[Ledger]:
    """The ledger with a small table of (id, n) rows: every odd id and plain one, twice each."""
    _PROBES.create_all(ledger.engine)
    with ledger.write() as session:
        session.execute(insert(PROBE), [{"id": i, "n": n} for i in ODD + PLAIN for n in (1, 2)])
    try:
        yield ledger
    finally:
        _PROBES.drop_all(ledger.engine)


def _rows(ledger: Ledger, where: Any) -> list[tuple[str, int]]:
    with ledger.read() as session:
        return [(r[0], r[1]) for r in session.execute(select(PROBE.c.id, PROBE.c.n).where(where(session)))]


@pytest.mark.parametrize(
    "ids",
    [[], ["it's"], ODD, [*ODD, "missing", "ünknown"], PLAIN[:1000], PLAIN + ODD],
    ids=["empty", "one", "odd", "some_missing", "thousand", "all"],
)
def test_among_reads_what_in_reads(probe: Ledger, ids: list[str]) -> None:
    expected = _rows(probe, lambda _s: PROBE.c.id.in_(ids))
    assert sorted(_rows(probe, lambda s: among(s, PROBE.c.id, ids))) == sorted(expected)
    assert len(expected) == 2 * len([i for i in ids if i in ODD or i in PLAIN])


@pytest.mark.parametrize(
    "pairs",
    [[], [("it's", 2)], [(i, 1) for i in ODD], [(i, 2) for i in PLAIN[:1000]] + [("東京", 3), ("nope", 1)]],
    ids=["empty", "one", "odd", "thousand_and_missing"],
)
def test_among_pairs_reads_what_in_reads(probe: Ledger, pairs: list[tuple[str, int]]) -> None:
    expected = _rows(probe, lambda _s: tuple_(PROBE.c.id, PROBE.c.n).in_(pairs))
    found = _rows(probe, lambda s: among_pairs(s, PROBE.c.id, PROBE.c.n, pairs))
    assert sorted(found) == sorted(expected)
    assert len(found) == len([p for p in pairs if p[1] in (1, 2) and p[0] in ODD + PLAIN])


def test_one_text_whatever_the_length_on_sqlite(probe: Ledger) -> None:
    if probe.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL keeps in_()")
    with statements(probe) as seen:
        for n in (1, 7, 500):
            _rows(probe, lambda s, n=n: among(s, PROBE.c.id, PLAIN[:n]))
    with statements(probe) as seen_pairs:
        for n in (1, 7, 500):
            _rows(probe, lambda s, n=n: among_pairs(s, PROBE.c.id, PROBE.c.n, [(i, 1) for i in PLAIN[:n]]))
    assert len(set(seen)) == 1, seen
    assert len(set(seen_pairs)) == 1, seen_pairs


def test_materialization_and_promotion_send_one_text_for_any_count(ledger: Ledger, clock: FixedClock) -> None:
    """The engine's reads of many schedules (drafts, their revisions, promotion): the same texts
    for 3 schedules as for 7. With ``in_()`` each count was a text, and a prepared statement, of its own."""
    if ledger.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL keeps in_()")
    ids = [f"every-minute-{i}" for i in range(7)]
    publish_many(ledger, clock, MINUTELY, ids)
    texts = []
    for count in (3, 7):
        with statements(ledger) as seen, ledger.write() as session:
            draft_many(session, ids[:count], clock)
            promote(session, NOW, PassReport(), schedules=ids[:count])
        texts.append({t for t in seen if " IN " in t})
    assert texts[0] == texts[1]
    assert len(texts[0]) >= 3  # the schedules, their revisions, what is due
