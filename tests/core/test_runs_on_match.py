"""Which live engines would run a spec published now (core.team.runs_on_match), and the
"Engines with labels" rows, as tables."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.team.actor import Actor
from core.team.runs_on_match import engine_match, label_rows, read_label_rows

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
ALICE = Actor("alice", "alpha")


@dataclass(frozen=True)
class Seen:
    host: str
    os_user: str | None
    labels: dict[str, str] | None
    trusts: tuple[str, ...] | None
    live: bool = True
    last_seen: datetime = NOW


def seen(host: str, user: str = "alice", *, live: bool = True, ago: timedelta = timedelta(0), **labels: str) -> Seen:
    trusts = tuple(labels.pop("trusts", "").split(",")) if "trusts" in labels else (user,)
    return Seen(host, user, {"host": host, "user": user, **labels}, trusts, live, NOW - ago)


ALPHA = seen("alpha")
BUILD = seen("build-1", "ci", gpu="yes", trusts="*")
BOBS = seen("beta", "bob", gpu="yes")
OLD_ALPHA = seen("alpha", live=False, ago=timedelta(hours=3, seconds=20))
BEFORE_0008 = Seen("gamma", None, None, None)
#: Recorded on the machine "box7", named alpha by TIDEMARK_HOSTNAME: its label names it.
RENAMED = Seen("box7", "alice", {"host": "alpha", "user": "alice"}, ("alice",))


@pytest.mark.parametrize(
    ("runs_on", "engines", "text"),
    [
        pytest.param(None, [ALPHA, BUILD], "Matches 1 live engine: alpha (alice)", id="absent_publishing_host"),
        pytest.param({"any": True}, [ALPHA, BUILD], "Matches 2 live engines: alpha (alice), build-1 (ci)",
                     id="any_engine"),
        pytest.param({"gpu": "yes"}, [ALPHA, BUILD], "Matches 1 live engine: build-1 (ci)", id="label"),
        pytest.param({"gpu": "yes"}, [BUILD, BOBS],
                     "Matches 1 live engine: build-1 (ci); not counted: beta (bob), which does not trust alice "
                     "(schedctl engine run --trust alice)", id="untrusting_named_apart"),
        pytest.param({"host": "beta"}, [BOBS],
                     "No live engine matches: the runs will wait — beta (bob) has the labels but does not trust "
                     "alice (schedctl engine run --trust alice)", id="only_untrusting"),
        pytest.param(None, [OLD_ALPHA, BUILD],
                     "No live engine matches: the runs will wait — last seen engine with host=alpha 3 h ago",
                     id="last_seen"),
        pytest.param({"site": "lab"}, [ALPHA], "No live engine matches: the runs will wait — no engine with "
                     "site=lab was ever seen on this ledger", id="never_seen"),
        pytest.param({"any": True}, [], "No live engine matches: the runs will wait — no engine was ever seen "
                     "on this ledger", id="no_engines"),
        pytest.param({"site": "lab"}, [BEFORE_0008], "Matches 1 live engine: gamma", id="engine_before_0008"),
        pytest.param(None, [RENAMED], "Matches 1 live engine: alpha (alice)", id="named_by_its_host_label"),
        pytest.param({"any": True}, [ALPHA, ALPHA], "Matches 2 live engines: alpha (alice) ×2", id="same_name_twice"),
        pytest.param(["not", "a", "map"], [ALPHA], "Matches 1 live engine: alpha (alice)", id="not_a_map_as_absent"),
    ],
)  # fmt: skip
def test_engine_match(runs_on: Any, engines: list[Seen], text: str) -> None:
    assert engine_match(runs_on, ALICE, engines).text(NOW) == text


def test_engine_match_parts() -> None:
    match = engine_match({"gpu": "yes"}, ALICE, [BUILD, BOBS, OLD_ALPHA])
    assert match.wanted == {"gpu": "yes"}
    assert match.matching == ("build-1 (ci)",)
    assert match.untrusting == ("beta (bob)",)
    assert match.last_seen is None  # a live engine has the labels


@pytest.mark.parametrize(
    ("rows", "result"),
    [
        pytest.param(["gpu=yes"], {"gpu": "yes"}, id="one"),
        pytest.param([" host = beta ", "gpu=yes"], {"host": "beta", "gpu": "yes"}, id="trimmed_two"),
        pytest.param(["url=a=b"], {"url": "a=b"}, id="value_with_equals"),
        pytest.param(["gpu"], "row 1: 'gpu' is not KEY=VALUE; write e.g. gpu=yes", id="no_equals"),
        pytest.param(["gpu=yes", "=x"], "row 2: the label's name is empty; write KEY=VALUE", id="empty_name"),
        pytest.param(["gpu="], "row 1: gpu has no value; write gpu=VALUE", id="empty_value"),
        pytest.param(["any=true"], "row 1: any is not a label; choose Any engine instead", id="any_reserved"),
        pytest.param(["gpu=yes", " "], "row 2 is empty: type KEY=VALUE or remove the row", id="empty_row"),
        pytest.param(["gpu=yes", "gpu=no"], "row 2: gpu is given twice", id="twice"),
        pytest.param([], "name at least one label an engine must have, or choose Any engine", id="none"),
    ],
)
def test_read_label_rows(rows: list[str], result: dict[str, str] | str) -> None:
    if isinstance(result, dict):
        assert read_label_rows(rows) == result
        assert read_label_rows(label_rows(result)) == result  # round trip
    else:
        with pytest.raises(ValueError) as raised:
            read_label_rows(rows)
        assert str(raised.value) == result


@pytest.mark.parametrize(
    ("runs_on", "rows"),
    [
        pytest.param(None, [], id="absent"),
        pytest.param({"any": True}, [], id="any"),
        pytest.param({"host": "beta", "gpu": "yes"}, ["host=beta", "gpu=yes"], id="labels"),
        pytest.param("beta", [], id="not_a_map"),
    ],
)
def test_label_rows(runs_on: Any, rows: list[str]) -> None:
    assert label_rows(runs_on) == rows
