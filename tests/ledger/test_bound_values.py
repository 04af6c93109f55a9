"""The hot path's bound values (core.ledger.prepared) reach SQLite exactly as the ledger's
column types send them: an instant in any zone as its UTC text, a state as its text, text and
numbers as they are; an instant without a zone is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import bindparam, create_engine, select
from sqlalchemy.orm import Session

from core.ledger.models import UtcDateTime
from core.ledger.prepared import Prepared, sqlite_instant
from core.ledger.states import OccurrenceState

_ECHO = Prepared(select(bindparam("p_value")))
_ENGINE = create_engine("sqlite://")
_ZONES = st.builds(timezone, st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23)))
_INSTANTS = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=_ZONES | st.just(UTC)
)


def _echoed(value: Any) -> Any:
    """What SQLite received for ``value`` bound by a prepared statement (it selects it back)."""
    with Session(_ENGINE) as session, session.begin():
        row = _ECHO.first(session, {"p_value": value})
    assert row is not None
    return row[0]


@given(_INSTANTS)
def test_an_instant_in_any_zone_is_sent_as_the_column_sends_it(value: datetime) -> None:
    assert _echoed(value) == UtcDateTime().process_bind_param(value, _ENGINE.dialect)


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        pytest.param("occ-1", "occ-1", id="text"),
        pytest.param(7, 7, id="number"),
        pytest.param(None, None, id="null"),
        pytest.param(True, 1, id="flag"),
        pytest.param(OccurrenceState.RETRY_WAIT, "RETRY_WAIT", id="state"),
        pytest.param({"a": [1, 2]}, '{"a": [1, 2]}', id="json"),
        pytest.param(datetime(2026, 3, 2, 1, 2, 3, 5, tzinfo=UTC), "2026-03-02 01:02:03.000005", id="utc_instant"),
    ],
)
def test_values_are_sent_as_the_ledger_stores_them(value: Any, sent: Any) -> None:
    assert _echoed(value) == sent


def test_an_instant_without_a_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="has no time zone"):
        _echoed(datetime(2026, 3, 2, 1, 2, 3))


@given(st.lists(_INSTANTS, min_size=1, max_size=6), st.lists(st.integers(min_value=0, max_value=5), max_size=12))
def test_an_instant_bound_again_is_sent_as_it_was_the_first_time(instants: list[datetime], picks: list[int]) -> None:
    """The text of the instant converted last is kept (a transaction binds its ``now`` several
    times): the same object again, or another equal or different one, is still sent as its
    column sends it."""
    order = instants + [instants[i % len(instants)] for i in picks] + [value + timedelta(0) for value in instants]
    column = UtcDateTime()
    assert [sqlite_instant(value) for value in order] == [
        column.process_bind_param(value, _ENGINE.dialect) for value in order
    ]


def test_a_state_is_sent_as_its_text_each_time() -> None:
    for _ in range(2):
        assert [_echoed(state) for state in OccurrenceState] == [state.value for state in OccurrenceState]
