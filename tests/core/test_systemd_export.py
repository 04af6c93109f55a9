"""``schedctl export systemd``: a spec as a timer and its service, the nearest equivalent with a
comment for each policy systemd cannot keep, refused with the reason where there is none; and the
round trip: export, then import, gives the same occurrences where the export was exact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.exporting.systemd import ExportError, on_calendar
from core.importing.systemd_calendar import calendar_rule, parse_calendar
from core.recurrence.preview import build_preview
from core.spec.files import dump_yaml, load_spec
from core.spec.model import ScheduleSpec
from tests.core.conftest import Run

NOW = ["--now", "2026-03-01T12:00:00Z"]
_FROM, _UNTIL = datetime(2026, 3, 1, 12, tzinfo=UTC), datetime(2027, 3, 1, 12, tzinfo=UTC)


def _document(**keys: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "nightly",
        "revision": 1,
        "title": "Nightly",
        "timeZone": "Europe/Berlin",
        "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "misfirePolicy": "SKIP",
        "overlapPolicy": "SKIP",
        "retry": {"maxAttempts": 1},
        "task": {"argv": ["/usr/bin/backup", "--to", "/mnt/a b", "100%"], "env": {"MODE": "full"}, "timeout": "PT1H"},
    }
    document.update(keys)
    return document


def _runs(spec: ScheduleSpec) -> list[datetime]:
    rows = build_preview(spec, _FROM, until=_UNTIL).rows
    return [row.resolved for row in rows if row.runnable and row.resolved is not None]


def _round_trip(run: Run, tmp_path: Path, document: dict[str, Any]) -> tuple[str, str, ScheduleSpec]:
    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(document), encoding="utf-8")
    units = tmp_path / "units"
    status, exported, stderr = run("export", "systemd", str(spec_path), "--out", str(units), *NOW)
    assert (status, stderr) == (0, ""), stderr
    status, _, stderr = run("import", "systemd", str(units / "nightly.timer"), "--out", str(tmp_path / "back"), *NOW)
    assert (status, stderr) == (0, ""), stderr
    timer = (units / "nightly.timer").read_text(encoding="utf-8")
    return exported, timer, load_spec(tmp_path / "back" / "nightly.yaml")


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0",
        "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0",
        "FREQ=HOURLY;BYMINUTE=0,15,30,45",
        "FREQ=MINUTELY;INTERVAL=20",
        "FREQ=HOURLY;INTERVAL=6;BYMINUTE=5",
        "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=23;BYMINUTE=59;BYSECOND=30",
        "FREQ=YEARLY;BYMONTH=1,4,7,10;BYMONTHDAY=1;BYHOUR=6;BYMINUTE=0",
        "FREQ=DAILY;BYMONTH=12;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0",
        "FREQ=WEEKLY",
    ],
)
def test_an_exact_export_imports_back_to_the_same_occurrences(run: Run, tmp_path: Path, rule: str) -> None:
    document = _document(rule=rule)
    exported, timer, back = _round_trip(run, tmp_path, document)
    assert "exact: systemd runs it when the spec does" in exported
    assert "not kept" not in timer
    original = load_spec(tmp_path / "nightly.yaml")
    assert _runs(back) == _runs(original)
    assert back.task is not None and original.task is not None
    assert (back.task.argv, back.task.env, back.task.timeout) == (
        original.task.argv,
        original.task.env,
        original.task.timeout,
    )
    assert (back.misfire_policy, back.overlap_policy) == (original.misfire_policy, original.overlap_policy)


def test_a_policy_systemd_cannot_keep_is_a_comment_in_the_timer(run: Run, tmp_path: Path) -> None:
    document = _document(
        gapPolicy="SHIFT_FORWARD",
        foldPolicy="BOTH",
        misfirePolicy="CATCH_UP_BOUNDED",
        maxCatchUp=3,
        overlapPolicy="ALLOW",
        retry={"maxAttempts": 3},
        jitter="PT5M",
    )
    exported, timer, back = _round_trip(run, tmp_path, document)
    for said in (
        "# not kept: gapPolicy SHIFT_FORWARD: systemd does not run a time the clocks jump over",
        "# not kept: foldPolicy BOTH: systemd runs a repeated time once, at its first reading",
        "# not kept: misfirePolicy CATCH_UP_BOUNDED: Persistent=true catches up one missed run, not more",
        "# not kept: overlapPolicy ALLOW: systemd never starts a service that still runs",
        "# not kept: retry maxAttempts 3: a timer never runs a failed service again",
        "# RandomizedDelaySec=: systemd draws a new delay each time",
    ):
        assert said in timer
    assert "Persistent=true\nRandomizedDelaySec=5min\n" in timer
    assert "not kept: gapPolicy SHIFT_FORWARD" in exported and "nearest equivalent" in exported
    # Imported back, the spec says what systemd does.
    assert (back.effective_gap_policy.value, back.effective_fold_policy.value) == ("SKIP", "FIRST_ONLY")
    assert (back.effective_max_catch_up, back.jitter) == (1, timedelta(minutes=5))


def test_a_business_calendar_is_a_comment_in_the_timer(run: Run, tmp_path: Path) -> None:
    document = _document(businessCalendar={"holidays": ["DE-BE"]}, holidayPolicy="SKIP")
    _, timer, _ = _round_trip(run, tmp_path, document)
    assert (
        "# not kept: businessCalendar with holidayPolicy SKIP: systemd knows no holidays or business days; "
        "runs on closed days happen as the rule says" in timer
    )


@pytest.mark.parametrize(
    ("keys", "why"),
    [
        ({"rule": "FREQ=DAILY;INTERVAL=2;BYHOUR=9;BYMINUTE=0"}, "INTERVAL=2 counts from the start"),
        ({"rule": "FREQ=MONTHLY;BYDAY=1MO;BYHOUR=9;BYMINUTE=0"}, "a numbered weekday (the 1st Monday)"),
        ({"rule": "FREQ=DAILY;COUNT=3;BYHOUR=9;BYMINUTE=0"}, "COUNT has no systemd equivalent"),
        ({"rule": "FREQ=MONTHLY;BYMONTHDAY=1,-1;BYHOUR=9;BYMINUTE=0"}, "from both ends of the month"),
        ({"task": {"argv": ["/bin/x"], "env": {"TOKEN": {"secret": "tok"}}}}, "TOKEN come from secrets"),
    ],
)
def test_no_equivalent_is_refused_with_the_reason(run: Run, tmp_path: Path, keys: dict[str, Any], why: str) -> None:
    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(_document(**keys)), encoding="utf-8")
    status, stdout, stderr = run("export", "systemd", str(spec_path), "--out", str(tmp_path / "units"), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr.startswith(f"{spec_path}: no systemd equivalent: ") and why in stderr and stderr.count("\n") == 1
    assert not (tmp_path / "units").exists()


def test_an_interval_is_the_nearest_elapsed_time_timer(run: Run, tmp_path: Path) -> None:
    document = _document(kind="interval", every="PT1H30M", anchor="2026-03-01T10:00:00Z")
    for key in ("rule", "start", "gapPolicy", "foldPolicy"):
        del document[key]
    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(document), encoding="utf-8")
    assert run("export", "systemd", str(spec_path), "--out", str(tmp_path / "units"), *NOW)[0] == 0
    timer = (tmp_path / "units" / "nightly.timer").read_text(encoding="utf-8")
    assert "OnActiveSec=0\nOnUnitActiveSec=1h 30min\n" in timer
    assert "# not kept: anchor 2026-03-01 10:00:00+00:00: systemd counts OnUnitActiveSec=" in timer


@pytest.mark.parametrize(
    ("rule", "expression"),
    [
        ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "*-*-* 09:00:00"),
        ("FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0", "Sat,Sun *-*-* 10:00:00"),
        ("FREQ=HOURLY;BYMINUTE=0", "*-*-* *:00:00"),
        ("FREQ=MINUTELY;INTERVAL=15", "*-*-* *:00,15,30,45:00"),
        ("FREQ=MONTHLY;BYMONTHDAY=-3,-1", "*-*~01,03 00:00:00"),
    ],
)
def test_rule_to_calendar_and_back(rule: str, expression: str) -> None:
    start = datetime(2026, 1, 1)
    assert on_calendar(rule, start) == expression
    assert calendar_rule(parse_calendar(expression)).rule.split(";")[0] in (
        "FREQ=DAILY",
        "FREQ=WEEKLY",
        "FREQ=HOURLY",
        "FREQ=MONTHLY",
    )


def test_a_rule_part_systemd_has_not(run: Run) -> None:
    with pytest.raises(ExportError, match="BYSETPOS"):
        on_calendar("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=1", datetime(2026, 1, 1))


def _symlink_to_nowhere(units: Path, name: str) -> Path:
    """A dangling symlink as ``name``, pointing at a file that must never be made through it."""
    (units / name).symlink_to(units / "elsewhere" / "target")
    return units / "elsewhere" / "target"


@pytest.mark.parametrize(
    ("overwrite", "in_the_way", "said"),
    [
        pytest.param(False, "symlink", "{path}: already exists; give --overwrite, or another --out", id="dangling"),
        pytest.param(False, "folder", "{path}: is a folder; nothing was written", id="folder"),
        pytest.param(True, "folder", "{path}: is a folder; nothing was written", id="folder_overwrite"),
    ],
)
def test_the_units_land_together_or_not_at_all(
    run: Run, tmp_path: Path, overwrite: bool, in_the_way: str, said: str
) -> None:
    """The service is written after the timer: a name taken by the second one (a dangling symlink,
    which exists() does not see, or a folder) is found before the first one is written."""
    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(_document()), encoding="utf-8")
    units = tmp_path / "units"
    units.mkdir()
    if in_the_way == "symlink":
        target = _symlink_to_nowhere(units, "nightly.service")
    else:
        (units / "nightly.service").mkdir()
    options = ["--overwrite"] if overwrite else []
    status, stdout, stderr = run("export", "systemd", str(spec_path), "--out", str(units), *options, *NOW)
    assert (status, stdout, stderr) == (2, "", said.format(path=units / "nightly.service") + "\n")
    assert sorted(p.name for p in units.iterdir()) == ["nightly.service"]
    if in_the_way == "symlink":
        assert not target.exists() and (units / "nightly.service").is_symlink()


def test_overwrite_replaces_a_dangling_symlink_itself_never_what_it_points_to(run: Run, tmp_path: Path) -> None:
    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(_document()), encoding="utf-8")
    units = tmp_path / "units"
    units.mkdir()
    target = _symlink_to_nowhere(units, "nightly.service")
    status, _, stderr = run("export", "systemd", str(spec_path), "--out", str(units), "--overwrite", *NOW)
    assert (status, stderr) == (0, "")
    assert not target.exists() and not (units / "nightly.service").is_symlink()
    assert sorted(p.name for p in units.iterdir()) == ["nightly.service", "nightly.timer"]


def test_a_name_taken_while_writing_leaves_none_of_the_units(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks pass, then the service's name is taken before it is put in place (another
    process): the timer this export already put is removed again."""
    import core.cli.import_commands as writing

    spec_path = tmp_path / "nightly.yaml"
    spec_path.write_text(dump_yaml(_document()), encoding="utf-8")
    units = tmp_path / "units"
    place = writing._place

    def racing(temp: str, path: Path, *, overwrite: bool) -> None:
        if path.name == "nightly.service":
            path.symlink_to(units / "elsewhere")
        place(temp, path, overwrite=overwrite)

    monkeypatch.setattr(writing, "_place", racing)
    status, stdout, stderr = run("export", "systemd", str(spec_path), "--out", str(units), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr == f"{units / 'nightly.service'}: appeared while writing; nothing was written\n"
    assert sorted(p.name for p in units.iterdir()) == ["nightly.service"]
