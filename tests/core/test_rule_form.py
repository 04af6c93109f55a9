"""The recurrence form: RRULE text to form fields and back.

Real rules (RFC 5545 §3.8.5.3 examples, the demo schedules) are read into a
form and written back; the written rule must name the same local date-times.
Hypothesis checks form -> text -> form is the identity and text -> form ->
text keeps the meaning.
"""

from __future__ import annotations

import itertools
from datetime import datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.recurrence.form import (
    FREQUENCIES,
    NTH_CHOICES,
    WORKDAYS,
    FormError,
    RuleForm,
    form_from_rule,
    format_numbers,
    parse_numbers,
    parse_times,
    rule_text,
    rule_without_end,
    switch_frequency,
    times_parts,
    with_count,
)
from core.recurrence.rules import WEEKDAYS, RuleError, build_rrule, parse_rule

RFC_START = datetime(1997, 9, 2, 9, 0)


def first(text: str, start: datetime, n: int = 40) -> list[datetime]:
    """The first ``n`` local date-times of a rule from ``start`` within 200 years.

    UNTIL is left out (it is kept verbatim); the bound keeps a rule that never
    yields (Feb 30) from walking to the year 9999.
    """
    parsed = parse_rule(text)
    count = int(parsed.parts.get("COUNT", n))
    bound = start.replace(year=start.year + 200, day=min(start.day, 28))
    rule = build_rrule(parsed, start, until=bound, overrides={"COUNT": None})
    return list(itertools.islice(rule, min(n, count)))


# --- real rules --------------------------------------------------------------------

SHOWN = [
    pytest.param("FREQ=DAILY;COUNT=10", id="rfc_daily_count_10"),
    pytest.param("FREQ=DAILY;UNTIL=19971224T000000Z", id="rfc_daily_until"),
    pytest.param("FREQ=DAILY;INTERVAL=2", id="rfc_every_other_day"),
    pytest.param("FREQ=DAILY;INTERVAL=10;COUNT=5", id="rfc_every_10_days_5_times"),
    pytest.param("FREQ=WEEKLY;COUNT=10", id="rfc_weekly_count_10"),
    pytest.param("FREQ=WEEKLY;INTERVAL=2;WKST=SU", id="rfc_every_other_week"),
    pytest.param("FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH", id="rfc_weekly_tu_th_until"),
    pytest.param("FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", id="rfc_biweekly_mo_we_fr"),
    pytest.param("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", id="rfc_wkst_matters"),
    pytest.param("FREQ=MONTHLY;COUNT=10;BYDAY=1FR", id="rfc_first_friday"),
    pytest.param("FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15", id="rfc_2nd_and_15th"),
    pytest.param("FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15", id="rfc_every_18_months"),
    pytest.param("FREQ=YEARLY;COUNT=10;BYMONTH=6,7", id="rfc_june_july"),
    pytest.param("FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3", id="rfc_every_other_year_q1"),
    pytest.param("FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T210000Z", id="rfc_every_3_hours"),
    pytest.param("FREQ=MINUTELY;INTERVAL=15;COUNT=6", id="rfc_every_15_minutes"),
    pytest.param("FREQ=MINUTELY;INTERVAL=90;COUNT=4", id="rfc_every_90_minutes"),
    pytest.param("FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40", id="rfc_every_20_min_daily"),
    pytest.param("FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16", id="rfc_every_20_min_minutely"),
    pytest.param("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", id="last_workday_of_month"),
    pytest.param("FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0", id="last_day_of_month"),
    pytest.param("FREQ=YEARLY;BYMONTH=3;BYDAY=2TU", id="second_tuesday_of_march"),
    pytest.param("FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=17;BYMINUTE=0", id="last_friday"),
    pytest.param("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=45", id="workdays_at_0745"),
    pytest.param("FREQ=HOURLY;BYDAY=SA,SU;BYHOUR=8,12;BYMINUTE=5,35", id="weekend_hourly_filter"),
    pytest.param("FREQ=DAILY;BYSECOND=0", id="bysecond_same_as_start"),
]


@pytest.mark.parametrize("text", SHOWN)
def test_real_rule_is_shown_and_written_back_with_the_same_times(text: str) -> None:
    form = form_from_rule(text, RFC_START)
    assert form is not None
    written = rule_text(form)
    assert first(written, RFC_START) == first(text, RFC_START)
    assert form_from_rule(written, RFC_START) == form
    parts = parse_rule(text).parts
    for kept in ("COUNT", "UNTIL", "WKST"):
        assert parse_rule(written).parts.get(kept) == parts.get(kept)


NOT_SHOWN = [
    pytest.param(
        "FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA", id="rfc_yearly_plain_byday"
    ),
    pytest.param("FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1", id="rfc_daily_bymonth"),
    pytest.param("FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU", id="rfc_two_numbered_days"),
    pytest.param("FREQ=MONTHLY;COUNT=6;BYDAY=-2MO", id="rfc_second_to_last_monday"),
    pytest.param("FREQ=MONTHLY;BYMONTHDAY=-3", id="rfc_third_to_last_day"),
    pytest.param("FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1", id="rfc_first_and_last_day"),
    pytest.param("FREQ=MONTHLY;INTERVAL=2;BYDAY=TU", id="rfc_every_tuesday_every_other_month"),
    pytest.param("FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200", id="rfc_byyearday"),
    pytest.param("FREQ=YEARLY;BYDAY=20MO", id="rfc_20th_monday"),
    pytest.param("FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", id="rfc_byweekno"),
    pytest.param("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", id="rfc_friday_13th"),
    pytest.param("FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3", id="rfc_bysetpos_3"),
    pytest.param("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", id="rfc_second_to_last_workday"),
    pytest.param("FREQ=MINUTELY;BYMINUTE=0,30", id="minutely_byminute"),
    pytest.param("FREQ=DAILY;BYSECOND=30", id="bysecond_other_than_start"),
    pytest.param("FREQ=YEARLY;BYMONTHDAY=1", id="yearly_days_without_months"),
    pytest.param("FREQ=YEARLY;BYMONTH=3,6;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", id="yearly_setpos_over_two_months"),
]


@pytest.mark.parametrize("text", NOT_SHOWN)
def test_rule_beyond_the_form_gives_none(text: str) -> None:
    assert form_from_rule(text, RFC_START) is None


def test_invalid_rule_raises_the_parsers_message() -> None:
    with pytest.raises(RuleError, match="BYHOUR=25 is out of range"):
        form_from_rule("FREQ=DAILY;BYHOUR=25", RFC_START)


FORMS = [
    pytest.param(
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        datetime(2026, 1, 1),
        RuleForm(freq="DAILY", hours=(2,), minutes=(30,)),
        id="new_york_0230_daily",
    ),
    pytest.param(
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30",
        datetime(2026, 1, 4, 2, 30),
        RuleForm(freq="WEEKLY", weekdays=("SU",), hours=(2,), minutes=(30,)),
        id="melbourne_sunday_sync",
    ),
    pytest.param(
        "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=18;BYMINUTE=0",
        datetime(2026, 1, 1),
        RuleForm(freq="MONTHLY", month_mode="day", month_days=(31,), hours=(18,), minutes=(0,)),
        id="invoice_day_31",
    ),
    pytest.param(
        "FREQ=HOURLY;BYMINUTE=15",
        datetime(2026, 1, 1, 0, 15),
        RuleForm(freq="HOURLY", minutes=(15,)),
        id="berlin_hourly_at_15",
    ),
    pytest.param(
        "FREQ=MONTHLY",
        datetime(2026, 1, 17, 8, 5),
        RuleForm(freq="MONTHLY", month_mode="day", month_days=(17,), hours=(8,), minutes=(5,)),
        id="monthly_day_from_start",
    ),
    pytest.param(
        "FREQ=YEARLY",
        datetime(2026, 7, 4, 12, 0),
        RuleForm(freq="YEARLY", months=(7,), month_mode="day", month_days=(4,), hours=(12,), minutes=(0,)),
        id="yearly_date_from_start",
    ),
    pytest.param(
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=17",
        datetime(2026, 1, 1, 9, 45),
        RuleForm(freq="MONTHLY", month_mode="last_weekday", hours=(17,), minutes=(45,)),
        id="last_weekday_minute_from_start",
    ),
    pytest.param(
        "FREQ=YEARLY;BYMONTH=11;BYDAY=4TH;BYHOUR=10;BYMINUTE=0",
        datetime(2026, 1, 1),
        RuleForm(
            freq="YEARLY", months=(11,), month_mode="nth_weekday", nth=4, nth_weekday="TH", hours=(10,), minutes=(0,)
        ),
        id="thanksgiving",
    ),
]


@pytest.mark.parametrize(("text", "start", "expected"), FORMS)
def test_form_fields_of_real_rules(text: str, start: datetime, expected: RuleForm) -> None:
    assert form_from_rule(text, start) == expected


# --- writing -----------------------------------------------------------------------


def test_times_that_are_a_grid_split_into_hours_and_minutes() -> None:
    assert times_parts([(9, 0), (17, 0), (9, 30), (17, 30)]) == ((9, 17), (0, 30))


def test_times_that_are_not_a_grid_name_the_times_they_would_add() -> None:
    with pytest.raises(FormError, match="also run at 09:45, 17:15"):
        times_parts([(9, 15), (17, 45)])


@pytest.mark.parametrize(
    ("form", "message"),
    [
        pytest.param(RuleForm(freq="WEEKLY", hours=(9,), minutes=(0,)), "at least one weekday", id="no_weekday"),
        pytest.param(
            RuleForm(freq="MONTHLY", month_mode="day", hours=(9,), minutes=(0,)), "day of the month", id="no_month_day"
        ),
        pytest.param(RuleForm(freq="DAILY", hours=(9,)), "time of day", id="no_minutes"),
        pytest.param(RuleForm(freq="DAILY", interval=0, hours=(9,), minutes=(0,)), "every 1 or more", id="interval_0"),
        pytest.param(
            RuleForm(freq="YEARLY", month_mode="day", month_days=(1,), hours=(9,), minutes=(0,)),
            "at least one month",
            id="no_month",
        ),
        pytest.param(
            RuleForm(freq="YEARLY", months=(3, 6), month_mode="last_weekday", hours=(9,), minutes=(0,)),
            "one month at a time",
            id="last_weekday_two_months",
        ),
        pytest.param(RuleForm(freq="HOURLY"), "minute past the hour", id="hourly_no_minute"),
        pytest.param(RuleForm(freq="FORTNIGHTLY"), "not a frequency", id="unknown_freq"),
    ],
)
def test_incomplete_form_says_what_is_missing(form: RuleForm, message: str) -> None:
    with pytest.raises(FormError, match=message):
        rule_text(form)


def test_switching_frequency_keeps_times_and_fills_days_from_start() -> None:
    start = datetime(2026, 1, 15, 2, 30)  # a Thursday
    daily = RuleForm(freq="DAILY", hours=(2, 14), minutes=(30,), count=5)
    weekly = switch_frequency(daily, "WEEKLY", start)
    assert weekly == RuleForm(freq="WEEKLY", weekdays=("TH",), hours=(2, 14), minutes=(30,), count=5)
    monthly = switch_frequency(weekly, "MONTHLY", start)
    assert monthly.month_days == (15,) and monthly.times == ((2, 30), (14, 30))
    yearly = switch_frequency(monthly, "YEARLY", start)
    assert yearly.months == (1,)
    hourly = switch_frequency(yearly, "HOURLY", start)
    assert hourly == RuleForm(freq="HOURLY", minutes=(30,), count=5)
    assert rule_text(switch_frequency(hourly, "DAILY", start)) == "FREQ=DAILY;COUNT=5;BYHOUR=2;BYMINUTE=30"


# --- properties --------------------------------------------------------------------

_weekday_sets = st.sets(st.sampled_from(WEEKDAYS)).map(lambda s: tuple(d for d in WEEKDAYS if d in s))
_sorted = lambda values: tuple(sorted(values))  # noqa: E731


@st.composite
def forms(draw: st.DrawFn) -> RuleForm:
    """Any form that :func:`rule_text` accepts, in its canonical spelling."""
    freq = draw(st.sampled_from(FREQUENCIES))
    count = draw(st.none() | st.integers(1, 500))
    until = None if count else draw(st.none() | st.sampled_from(["20301231T235959", "20301231T235959Z", "20300101"]))
    form = RuleForm(
        freq=freq,
        interval=draw(st.integers(1, 30)),
        count=count,
        until=until,
        wkst=draw(st.none() | st.sampled_from(WEEKDAYS)),
    )
    some_hours = st.sets(st.integers(0, 23), max_size=5).map(_sorted)
    hours = st.sets(st.integers(0, 23), min_size=1, max_size=5).map(_sorted)
    minutes = st.sets(st.integers(0, 59), min_size=1, max_size=5).map(_sorted)
    if freq == "MINUTELY":
        form = RuleForm(**{**form.__dict__, "hours": draw(some_hours)})
    elif freq == "HOURLY":
        form = RuleForm(**{**form.__dict__, "hours": draw(some_hours), "minutes": draw(minutes)})
    else:
        form = RuleForm(**{**form.__dict__, "hours": draw(hours), "minutes": draw(minutes)})
    if freq in ("MINUTELY", "HOURLY", "DAILY"):
        return RuleForm(**{**form.__dict__, "weekdays": draw(_weekday_sets)})
    if freq == "WEEKLY":
        return RuleForm(**{**form.__dict__, "weekdays": draw(_weekday_sets.filter(bool))})
    mode = draw(st.sampled_from(["day", "nth_weekday", "last_day", "last_weekday"]))
    fields: dict[str, object] = {"month_mode": mode}
    if mode == "day":
        fields["month_days"] = draw(st.sets(st.integers(1, 31), min_size=1, max_size=4).map(_sorted))
    if mode == "nth_weekday":
        fields["nth"] = draw(st.sampled_from(NTH_CHOICES))
        fields["nth_weekday"] = draw(st.sampled_from(WEEKDAYS))
    if freq == "YEARLY":
        size = 1 if mode == "last_weekday" else 4
        fields["months"] = draw(st.sets(st.integers(1, 12), min_size=1, max_size=size).map(_sorted))
    return RuleForm(**{**form.__dict__, **fields})


starts = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 12, 31)).map(
    lambda d: d.replace(microsecond=0)
)


@given(forms(), starts)
def test_form_to_text_to_form_is_the_identity(form: RuleForm, start: datetime) -> None:
    assert form_from_rule(rule_text(form), start) == form


@st.composite
def rule_texts(draw: st.DrawFn) -> str:
    """Rules built from the parts a form can show, some left to default from the start."""
    freq = draw(st.sampled_from(FREQUENCIES))
    parts = [f"FREQ={freq}"]
    if draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 5))}")
    if draw(st.booleans()):
        parts.append(f"COUNT={draw(st.integers(1, 60))}")
    if freq in ("MONTHLY", "YEARLY"):
        if freq == "YEARLY" and draw(st.booleans()):
            parts.append("BYMONTH=" + ",".join(map(str, draw(st.sets(st.integers(1, 12), min_size=1, max_size=3)))))
        choice = draw(st.sampled_from(["none", "days", "last", "nth", "workday"]))
        if choice == "days":
            parts.append("BYMONTHDAY=" + ",".join(map(str, draw(st.sets(st.integers(1, 31), min_size=1, max_size=3)))))
        elif choice == "last":
            parts.append("BYMONTHDAY=-1")
        elif choice == "nth":
            parts.append(f"BYDAY={draw(st.sampled_from(NTH_CHOICES))}{draw(st.sampled_from(WEEKDAYS))}")
        elif choice == "workday":
            parts.append("BYDAY=" + ",".join(WORKDAYS) + ";BYSETPOS=-1")
    elif draw(st.booleans()):
        parts.append("BYDAY=" + ",".join(draw(st.sets(st.sampled_from(WEEKDAYS), min_size=1))))
    if draw(st.booleans()):
        parts.append("BYHOUR=" + ",".join(map(str, draw(st.sets(st.integers(0, 23), min_size=1, max_size=3)))))
    if freq != "MINUTELY" and draw(st.booleans()):
        parts.append("BYMINUTE=" + ",".join(map(str, draw(st.sets(st.integers(0, 59), min_size=1, max_size=3)))))
    if draw(st.booleans()):
        parts.append(f"WKST={draw(st.sampled_from(WEEKDAYS))}")
    return ";".join(parts)


@given(rule_texts(), starts)
def test_text_to_form_to_text_keeps_every_occurrence(text: str, start: datetime) -> None:
    form = form_from_rule(text, start)
    assume(form is not None)
    assert form is not None
    # Rules naming only dates that never exist (Feb 30) are refused by the core,
    # and expanding them walks to the year 9999: leave them out.
    if form.uses_days_of_month and form.month_mode == "day":
        longest = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
        assume(any(d <= longest[m] for m in form.months or range(1, 13) for d in form.month_days))
    written = rule_text(form)
    assert outcome(written, start) == outcome(text, start)


def outcome(text: str, start: datetime) -> list[datetime] | str:
    """The first occurrences, or "refused" when the rule can never yield (HOURLY;INTERVAL=2;BYHOUR=0 from 01:00)."""
    try:
        return first(text, start, 25)
    except RuleError:
        return "refused"


# --- the form's text fields ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1, 15", (1, 15), id="list"),
        pytest.param("9-12", (9, 10, 11, 12), id="range"),
        pytest.param("3, 1, 3,", (1, 3), id="repeats_and_trailing_comma"),
        pytest.param("", (), id="empty"),
    ],
)
def test_parse_numbers(text: str, expected: tuple[int, ...]) -> None:
    assert parse_numbers(text, 1, 31, "days") == expected


@pytest.mark.parametrize("text", ["32", "x", "5-2", "0"])
def test_parse_numbers_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        parse_numbers(text, 1, 31, "days")


def test_format_numbers_folds_runs() -> None:
    assert format_numbers((1, 2, 3, 4, 9, 11, 12)) == "1-4, 9, 11, 12"


def test_parse_times() -> None:
    assert parse_times("14:30, 2:05, 9") == ((2, 5), (9, 0), (14, 30))
    with pytest.raises(ValueError, match="'24:00'"):
        parse_times("24:00")


@pytest.mark.parametrize(
    ("text", "count", "expected"),
    [
        pytest.param("FREQ=DAILY", 5, "FREQ=DAILY;COUNT=5", id="adds_count"),
        pytest.param("FREQ=DAILY;UNTIL=20271231", 3, "FREQ=DAILY;COUNT=3", id="replaces_until"),
        pytest.param("FREQ=DAILY;COUNT=9;BYHOUR=2", 4, "FREQ=DAILY;COUNT=4;BYHOUR=2", id="replaces_count"),
    ],
)
def test_with_count(text: str, count: int, expected: str) -> None:
    assert with_count(text, count) == expected
    assert rule_without_end(expected) == rule_without_end(text)
