"""resources/grafana/tidemark.json: importable, every PromQL expression parses
(tests/promql_subset.py), and it names only metrics the endpoint serves, scraped
in-process from a ledger with a finished occurrence and an engine."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from promql_subset import PromQLError, parse

from core.clock import FixedClock
from core.engine.engine import Engine
from core.engine.metrics import registry_for
from core.engine.presence import announce
from core.ledger.db import Ledger
from core.ledger.publish import publish
from core.ledger.states import EngineKind

from . import spec, utc

DASHBOARD = Path(__file__).resolve().parents[2] / "resources" / "grafana" / "tidemark.json"
LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>[a-zA-Z_][a-zA-Z0-9_]*)\)$")


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for panel in board["panels"]:
        out += [panel, *panel.get("panels", [])]
    return out


def expressions(board: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in panels(board) for target in panel.get("targets", [])]


def served(ledger: Ledger, clock: FixedClock) -> dict[str, set[str]]:
    """Every sample name the endpoint serves, with the labels it carries."""
    with ledger.write() as session:
        publish(session, spec(cutoverAt="2026-03-01T12:00:00Z", task={"argv": [sys.executable, "-c", "0"]}), clock)
    clock.set(utc("2026-03-02T07:30:10Z"))
    Engine(ledger, clock).run_once()
    announce(ledger, clock, EngineKind.HEADLESS, host="alpha", pid=4711)
    text = generate_latest(registry_for(ledger, clock)).decode()
    names: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            names.setdefault(sample.name, set()).update(sample.labels)
    return names


def test_the_dashboard_is_importable() -> None:
    board = dashboard()
    assert board["schemaVersion"] >= 39 and board["uid"] == "tidemark" and board["id"] is None
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert LABEL_VALUES.match(variables["schedule"]["query"]["query"])
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    for panel in panels(board):
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert panel["targets"], panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]


def test_every_expression_parses_and_uses_only_known_variables() -> None:
    board = dashboard()
    known = {v["name"] for v in board["templating"]["list"]}
    used: set[str] = set()
    for expr in expressions(board):
        _metrics, variables = parse(expr)
        assert variables <= known, expr
        used |= variables
    assert "schedule" in used
    repeated = [p for p in panels(board) if p.get("repeat")]
    assert repeated and all(p["repeat"] in known for p in repeated)


def test_the_dashboard_names_only_served_metrics(ledger: Ledger, clock: FixedClock) -> None:
    board = dashboard()
    names = served(ledger, clock)
    used = set().union(*(parse(expr)[0] for expr in expressions(board)))
    assert used - set(names) == set()
    variable = LABEL_VALUES.match(board["templating"]["list"][1]["query"]["query"])
    assert variable is not None
    metric, label = variable["selector"], variable["label"]
    assert label in names[metric]
    wanted = {
        "tidemark_due_to_completion_seconds_bucket",
        "tidemark_oldest_unresolved_age_seconds",
        "tidemark_engine_last_seen_timestamp_seconds",
        "tidemark_unknown_effects",
        "tidemark_attempts_total",
        "tidemark_misfires_total",
        "tidemark_materialization_lag_seconds",
        "tidemark_due_to_start_delay_seconds_count",
    }
    assert wanted <= used


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param("sum(rate(tidemark_attempts_total[5m])", r"expected '\)'", id="unbalanced_paren"),
        pytest.param('tidemark_occurrences{state="DUE"', "expected 'string'|expected ','", id="unbalanced_brace"),
        pytest.param("rate(tidemark_attempts_total[5m)", r"expected '\]'", id="unbalanced_bracket"),
        pytest.param("irate(tidemark_attempts_total[5m])", "unknown function 'irate'", id="unknown_function"),
        pytest.param("rate(tidemark_attempts_total)", "must be a range", id="rate_of_instant"),
        pytest.param("tidemark_attempts_total[5m]", "cannot be graphed", id="bare_range"),
        pytest.param('tidemark_occurrences{state=="DUE"}', "expected 'string'", id="bad_matcher"),
        pytest.param("sum by (schedule (tidemark_occurrences)", r"expected '\)'", id="unbalanced_by"),
        pytest.param("tidemark_occurrences )", r"unexpected '\)'", id="stray_paren"),
        pytest.param("histogram_quantile(tidemark_occurrences)", "must be a scalar", id="quantile_arity"),
    ],
)
def test_the_parser_refuses_what_promql_refuses(expr: str, message: str) -> None:
    with pytest.raises(PromQLError, match=message):
        parse(expr)


def test_the_parser_reads_the_subset() -> None:
    metrics, variables = parse(
        'histogram_quantile(0.95, sum by (schedule, le) (rate(m_bucket{schedule=~"$schedule"}[$__rate_interval])))'
        " / time() - max(other)"
    )
    assert metrics == {"m_bucket", "other"} and variables == {"schedule"}


METRICS_DOC = DASHBOARD.parents[2] / "docs" / "metrics.md"
_DOC_ROW = re.compile(r"^\| `(?P<name>tidemark_[a-z_]+)` \| (?P<kind>[a-z]+)(?: \((?P<suffixes>[^)]*)\))? \|", re.M)


def documented() -> set[str]:
    """Every sample name docs/metrics.md's table promises: a counter's ``_total``, the suffixes it lists."""
    names: set[str] = set()
    for row in _DOC_ROW.finditer(METRICS_DOC.read_text(encoding="utf-8")):
        suffixes = re.findall(r"`(_[a-z]+)", row["suffixes"] or "")
        if row["kind"] == "counter":
            names.add(row["name"] if row["name"].endswith("_total") else row["name"] + "_total")
        elif suffixes:
            names.update(row["name"] + suffix for suffix in suffixes)
        else:
            names.add(row["name"])
    return names


def test_metrics_md_lists_exactly_the_samples_served(ledger: Ledger, clock: FixedClock) -> None:
    names = set(served(ledger, clock))
    assert not {name for name in names if name.endswith("_created")}
    assert documented() == names
    assert "_created" not in METRICS_DOC.read_text(encoding="utf-8")
