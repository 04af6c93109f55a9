"""scheduleSpec.v1: the schedule document as a model, and its JSON Schema.

The model's fields, their types and the checks each field makes on its own.
Validating a whole document (every problem at once, each naming its key) is
:mod:`core.spec.validation`'s; the text a published revision stores is
:mod:`core.spec.canonical`'s. This module knows nothing of recurrence rules:
the recurrence code compiles a :class:`ScheduleSpec`, so the model stays below it.
"""

from __future__ import annotations

import re
import string
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    TypeAdapter,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from core.enums import (
    AlertKind,
    Effect,
    FoldPolicy,
    GapPolicy,
    HolidayPolicy,
    InvalidDatePolicy,
    Kind,
    MisfirePolicy,
    OverlapPolicy,
    TzdbPolicy,
)
from core.errors import ZoneError
from core.os_text import key_text, shown
from core.team.secrets import SECRET_NAME, SECRET_NAME_RULE, name_problem
from core.time.durations import format_duration, parse_duration
from core.time.formats import fmt_local, fmt_utc, parse_instant, parse_local, parse_local_or_date
from core.time.zones import check_zone_name

SCHEMA_NAME = "scheduleSpec.v1"
SCHEDULE_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
MAX_REVISION = 2**31 - 1
TZDB_VERSION = re.compile(r"^[0-9A-Za-z._+-]{1,16}$")
#: The longest business period the ledger stores (its column's width).
MAX_PERIOD_CHARS = 255
#: The nominal time whose period is longest: the longest day and month names at once (Wednesday, September).
_LONGEST_NOMINAL = datetime(2026, 9, 30, 23, 59, 59, 999999)


def _no_items() -> list[Any]:
    """An empty list; a function of ours, as pydantic reads the signature of a default factory and
    that of the builtin ``list`` costs a millisecond and a half the first time."""
    return []


def _no_names() -> dict[str, Any]:
    """An empty mapping (see :func:`_no_items`)."""
    return {}


def _whole(value: Any) -> None:
    """Refuse a Python time with a fraction of a second (text is checked as it is parsed)."""
    if isinstance(value, timedelta) and value.microseconds:
        raise ValueError(f"{value} is not a whole number of seconds; durations are counted in whole seconds")
    if isinstance(value, datetime) and value.microsecond:
        raise ValueError(f"{value.isoformat()} has a fraction of a second; times are whole seconds")


def _duration(value: Any) -> timedelta:
    if isinstance(value, timedelta):
        _whole(value)
        return value
    return parse_duration(value)


def _local(value: Any) -> datetime:
    _whole(value)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            raise ValueError("this is a local wall-clock time in timeZone; remove the offset")
        return value
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time())
    return parse_local(value)


def _instant(value: Any) -> datetime:
    _whole(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("an instant needs an offset: end it with Z for UTC")
        return value.astimezone(UTC)
    return parse_instant(value)


def _end(value: Any) -> datetime:
    """``end`` is a local wall time, or a UTC instant when it ends in Z (or has an offset)."""
    _whole(value)
    if isinstance(value, datetime):
        return value if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, datetime.max.time().replace(microsecond=0))
    text = str(value).strip()
    if re.search(r"(Z|[+-]\d{2}:?\d{2})$", text, re.IGNORECASE):
        return parse_instant(text)
    if re.match(r"^\d{4}-\d{2}-\d{2}$", text):
        # A bare end date includes the whole of that day.
        return datetime.combine(date.fromisoformat(text), datetime.max.time().replace(microsecond=0))
    return parse_local(text)


def _zone(value: Any) -> str:
    try:
        return check_zone_name(value)
    except ZoneError as exc:
        raise ValueError(str(exc)) from None


def _exclusion(value: Any) -> date | datetime:
    _whole(value)
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            raise ValueError("exclusions are local dates or wall-clock times; remove the offset")
        return value
    if isinstance(value, date):
        return value
    return parse_local_or_date(value)


_DURATION_SCHEMA = {
    "type": "string",
    "pattern": r"^P(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?$",
    "description": "ISO 8601 duration in weeks, days, hours, minutes, whole seconds (PT15M, P1D)",
}
Duration = Annotated[
    timedelta,
    BeforeValidator(_duration),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema(_DURATION_SCHEMA),
]
LocalDateTime = Annotated[
    datetime,
    BeforeValidator(_local),
    PlainSerializer(fmt_local, return_type=str),
    WithJsonSchema({"type": "string", "description": "local wall-clock date-time, e.g. 2026-01-01T09:00:00"}),
]
Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    PlainSerializer(fmt_utc, return_type=str),
    WithJsonSchema({"type": "string", "description": "an instant, e.g. 2026-11-01T06:00:00Z"}),
]


def _fmt_end(value: datetime) -> str:
    return fmt_utc(value) if value.tzinfo is not None else fmt_local(value)


EndBound = Annotated[
    datetime,
    BeforeValidator(_end),
    PlainSerializer(_fmt_end, return_type=str),
    WithJsonSchema({"type": "string", "description": "local wall time, or a UTC instant ending in Z; inclusive"}),
]


def _fmt_exclusion(value: date | datetime) -> str:
    return fmt_local(value) if isinstance(value, datetime) else value.isoformat()


Exclusion = Annotated[
    date | datetime,
    BeforeValidator(_exclusion),
    PlainSerializer(_fmt_exclusion, return_type=str),
    WithJsonSchema({"type": "string", "description": "local date (2026-12-25) or local date-time"}),
]
ZoneName = Annotated[
    str,
    BeforeValidator(_zone),
    WithJsonSchema({"type": "string", "description": "IANA zone name such as America/New_York, or UTC"}),
]


#: The one label of ``runsOn: {any: true}``: any engine may run the schedule.
ANY_ENGINE = "any"


def runs_on_value(value: Any) -> Any:
    """``runsOn`` checked: a map of label to the text an engine's label must equal, or
    ``{any: true}`` alone. Raises ValueError naming what is wrong."""
    if value is None:
        return value
    if not isinstance(value, dict):
        raise ValueError(
            f"{shown(value)} is not a map of label to value; "
            "write e.g. {host: alpha}, or {any: true} for any engine"
        )
    if not value:
        raise ValueError("is empty; name the labels an engine must have, write {any: true}, or leave runsOn out")
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"label {shown(key)} is not a name; labels are non-empty text such as host or gpu")
        if key == ANY_ENGINE:
            if item is not True:
                raise ValueError(f"any: {shown(item)}; write {{any: true}} for any engine, or leave runsOn out")
            if len(value) > 1:
                raise ValueError("any: true stands alone (any engine); remove it, or the other labels")
        elif not isinstance(item, str) or not item.strip():
            raise ValueError(f"{key_text(key)}: {shown(item)} is not a label value; values are non-empty text")
    return dict(value)


RunsOn = Annotated[
    dict[str, str | bool],
    WithJsonSchema(
        {
            "description": "labels an engine must have, all of them (e.g. {host: alpha}), or {any: true} "
            "for any engine; absent: the host it was published from",
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"any": {"const": True}},
                    "required": ["any"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "minProperties": 1,
                    "propertyNames": {"minLength": 1, "not": {"const": "any"}},
                    "additionalProperties": {"type": "string", "minLength": 1},
                },
            ],
        }
    ),
]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=False,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
        use_enum_values=False,
    )


class _Nested(_Model):
    """A model that is only a key of :class:`ScheduleSpec` that most specs leave out (``task``,
    ``businessCalendar``, ``alerts``): pydantic builds its validator when it first validates one,
    not when the module loads."""

    model_config = ConfigDict(defer_build=True)


class _WhenPresent:
    """``Annotated[Task | None, _WhenPresent()]``: a key of :class:`ScheduleSpec` validated as its
    type by a validator built the first time a document holds the key (a spec without a task,
    a business calendar or alerts never builds theirs; together 5 ms of each command's start).

    What it checks and says is the type's own: the problems of a validation run by a validator
    keep their places (``task.argv``), and the JSON Schema is the type's (:class:`_SpecJsonSchema`)."""

    def __init__(self) -> None:
        self._kind: Any = None
        self._adapter: TypeAdapter[Any] | None = None

    @property
    def built(self) -> bool:
        """Whether the validator has been built (a document has held the key, or the schema was asked)."""
        return self._adapter is not None

    def adapter(self) -> TypeAdapter[Any]:
        if self._adapter is None:
            self._adapter = TypeAdapter(self._kind)
        return self._adapter

    def _validate(self, value: Any) -> Any:
        return self.adapter().validate_python(value)

    def __get_pydantic_core_schema__(self, kind: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        self._kind = kind
        return core_schema.no_info_plain_validator_function(self._validate, metadata={_WHEN_PRESENT: self})

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(self.adapter().core_schema)


_WHEN_PRESENT = "tidemark_when_present"


class _SpecJsonSchema(GenerateJsonSchema):
    """The JSON Schema of a key validated :class:`_WhenPresent` is that of its type, its title too:
    none for a nested model (``task``), the key's name for a list (``alerts``)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        inner = schema
        while isinstance(inner, dict) and inner.get("type") in ("model-field", "default"):
            inner = inner["schema"]
        later = inner.get("metadata", {}).get(_WHEN_PRESENT) if isinstance(inner, dict) else None
        if isinstance(later, _WhenPresent):
            return super().field_title_should_be_set(later.adapter().core_schema)
        return super().field_title_should_be_set(schema)


class Retry(_Model):
    """How a failed attempt is retried: exponential backoff, capped."""

    max_attempts: int = Field(default=3, ge=1, le=100, strict=True)
    initial_backoff: Duration = timedelta(seconds=30)
    multiplier: float = Field(default=2.0, ge=1.0, le=100.0)
    max_backoff: Duration = timedelta(minutes=10)


class SecretRef(_Nested):
    """``{secret: NAME}``: a task variable whose value the engine's host keeps (core.team.secrets), never the ledger."""

    secret: str = Field(
        description=f"the secret's name: {SECRET_NAME_RULE}", json_schema_extra={"pattern": f"^{SECRET_NAME.pattern}$"}
    )

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: str) -> str:
        why = name_problem(value)
        if why is not None:
            raise ValueError(why)
        return value


def _env_value(value: Any) -> Any:
    """A variable's value is text or ``{secret: NAME}``; anything else is refused in one clear line."""
    if isinstance(value, str | SecretRef):
        return value
    if isinstance(value, dict):
        if set(value) != {"secret"}:
            raise ValueError(f"a reference is written {{secret: NAME}}, got {shown(value)}")
        why = name_problem(value["secret"])
        if why is not None:
            raise ValueError(why)
        return value
    raise ValueError(f"must be text (quote a number: '8080') or {{secret: NAME}}, got {shown(value)}")


EnvValue = Annotated[str | SecretRef, BeforeValidator(_env_value)]


class Task(_Nested):
    """What runs: a command as an argv list, never through a shell."""

    kind: Literal["command"] = "command"
    argv: list[str] = Field(min_length=1)
    cwd: str | None = None
    env: dict[str, EnvValue] = Field(default_factory=_no_names)
    timeout: Duration = timedelta(minutes=10)
    effect: Effect = Effect.NON_IDEMPOTENT
    verify: list[str] | None = None

    @field_validator("argv")
    @classmethod
    def _argv(cls, value: list[str]) -> list[str]:
        if not value[0].strip():
            raise ValueError("the program (first element) is empty")
        return value

    @field_validator("verify")
    @classmethod
    def _verify(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or not value[0].strip()):
            raise ValueError("give the probe as a non-empty argv list, or leave verify out")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str | SecretRef]) -> dict[str, str | SecretRef]:
        for name in value:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
                raise ValueError(f"{shown(name)} is not a valid environment variable name")
        return value

    def secret_names(self) -> dict[str, str]:
        """Variable -> secret name, for the variables given as ``{secret: NAME}``."""
        return {var: value.secret for var, value in self.env.items() if isinstance(value, SecretRef)}


def _route_to(value: Any) -> Any:
    """An alert route's ``to``: a route text (core.team.alert_routes) or ``{secret: NAME}``."""
    from core.team.alert_routes import route_problem  # the routes' rules load only for a spec with alerts

    if isinstance(value, str):
        why = route_problem(value)
        if why is not None:
            raise ValueError(why)
        return value
    if isinstance(value, SecretRef) or (isinstance(value, dict) and set(value) == {"secret"}):
        return _env_value(value)
    raise ValueError(f"{shown(value)} is not a route; write mailto:ADDRESS, an https:// URL, or {{secret: NAME}}")


RouteTo = Annotated[
    str | SecretRef,
    BeforeValidator(_route_to),
    WithJsonSchema(
        {
            "description": "mailto:ADDRESS, an https:// URL (http:// only to a loopback address), or {secret: NAME}",
            "oneOf": [
                {"type": "string", "pattern": "^(mailto:|https://|http://)"},
                {
                    "type": "object",
                    "properties": {"secret": {"type": "string", "pattern": f"^{SECRET_NAME.pattern}$"}},
                    "required": ["secret"],
                    "additionalProperties": False,
                },
            ],
        }
    ),
]


def _all_kinds() -> list[AlertKind]:
    from core.team.alert_routes import DEFAULT_KINDS

    return list(DEFAULT_KINDS)


class AlertRoute(_Nested):
    """One ``alerts:`` route: where to tell, and of which states (all three when ``on`` is left out)."""

    to: RouteTo
    on: list[AlertKind] = Field(default_factory=_all_kinds)

    @field_validator("on")
    @classmethod
    def _on(cls, value: list[AlertKind]) -> list[AlertKind]:
        from core.team.alert_routes import kinds_problem

        why = kinds_problem(value)
        if why is not None:
            raise ValueError(why)
        return value

    def route_text(self) -> str:
        """The route as the ledger stores it: the text, or ``{secret: NAME}``."""
        return self.to if isinstance(self.to, str) else f"{{secret: {self.to.secret}}}"


#: RFC 5545 weekday codes, Monday first.
WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
WeekdayCode = Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def _default_weekend() -> list[WeekdayCode]:
    return ["SA", "SU"]


def _holiday_code(value: str) -> str:
    from core.calendar.holiday_codes import code_problem  # the holidays package loads only when a calendar names codes

    problem = code_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _calendar_date(value: Any) -> date:
    """A closed or open day: a date alone (2027-12-24), never a time."""
    if isinstance(value, datetime):
        raise ValueError(f"{value.isoformat()} is a date and time; give the date alone, e.g. {value:%Y-%m-%d}")
    if isinstance(value, date):
        return value
    text = value.strip() if isinstance(value, str) else None
    if text is not None and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise ValueError(f"{shown(value)} is not a date such as 2027-12-24")


CalendarDate = Annotated[
    date,
    BeforeValidator(_calendar_date),
    WithJsonSchema({"type": "string", "format": "date", "description": "a local date, e.g. 2027-12-24"}),
]
HolidayCodeText = Annotated[str, AfterValidator(_holiday_code)]


#: The most dates ``businessCalendar.closed`` and ``open`` each list: every day of ten years.
MAX_CALENDAR_DATES = 3660


def _twice(values: list[Any]) -> list[Any]:
    """The values listed again after their first place, in one pass."""
    seen: set[Any] = set()
    again = []
    for value in values:
        if value in seen:
            again.append(value)
        seen.add(value)
    return again


class BusinessCalendar(_Nested):
    """Which local dates are business days: public holidays, the weekend and a company's own dates."""

    holidays: list[HolidayCodeText] = Field(
        default_factory=_no_items,
        description="country or country-subdivision codes of the holidays package (US, US-NY, DE-BE, GB-SCT, JP)",
    )
    weekend: list[WeekdayCode] = Field(
        default_factory=_default_weekend, description="RFC 5545 weekday codes of the weekend (default SA, SU)"
    )
    closed: list[CalendarDate] = Field(default_factory=_no_items, description="extra closed dates (a company's own)")
    open: list[CalendarDate] = Field(
        default_factory=_no_items, description="dates that are business days despite the above"
    )

    @field_validator("closed", "open", mode="before")
    @classmethod
    def _not_too_many(cls, values: Any) -> Any:
        if isinstance(values, list) and len(values) > MAX_CALENDAR_DATES:
            raise ValueError(
                f"lists {len(values):,} dates; at most {MAX_CALENDAR_DATES:,} (every day of ten years) are taken"
            )
        return values

    @field_validator("holidays", "weekend", "closed", "open")
    @classmethod
    def _once(cls, values: list[Any]) -> list[Any]:
        twice = _twice(values)
        if twice:
            raise ValueError(f"{shown(str(twice[0]))} is listed twice")
        return values

    @field_validator("weekend")
    @classmethod
    def _some_workdays(cls, values: list[str]) -> list[str]:
        if len(set(values)) == len(WEEKDAY_CODES):
            raise ValueError("names all seven days, so no day would be a business day")
        return values

    @model_validator(mode="after")
    def _open_or_closed(self) -> BusinessCalendar:
        both = sorted(set(self.closed) & set(self.open))
        if both:
            raise ValueError(f"{both[0].isoformat()} is both closed and open; keep it in one list")
        return self


class ScheduleSpec(_Model):
    """One revision of a schedule, validated. Optional keys hold None when absent."""

    schema_: Literal["scheduleSpec.v1"] = Field(alias="schema")
    schedule_id: str
    #: At most what the ledger's integer columns hold.
    revision: int = Field(ge=1, le=MAX_REVISION, strict=True)
    title: str | None = None
    time_zone: ZoneName
    tzdb_version: str | None = None
    tzdb_policy: TzdbPolicy = TzdbPolicy.FOLLOW
    kind: Kind = Kind.CALENDAR
    rule: str | None = None
    start: LocalDateTime | None = None
    end: EndBound | None = None
    exclude: list[Exclusion] = Field(default_factory=_no_items)
    business_calendar: Annotated[BusinessCalendar | None, _WhenPresent()] = None
    holiday_policy: HolidayPolicy | None = None
    every: Duration | None = None
    anchor: Instant | None = None
    delay: Duration | None = None
    gap_policy: GapPolicy | None = None
    fold_policy: FoldPolicy | None = None
    invalid_date_policy: InvalidDatePolicy = InvalidDatePolicy.OMIT
    misfire_policy: MisfirePolicy = MisfirePolicy.CATCH_UP_BOUNDED
    max_catch_up: int | None = Field(default=None, ge=1, strict=True)
    lateness_window: Duration = timedelta(minutes=15)
    catch_up_window: Duration | None = None
    jitter: Duration = timedelta(0)
    overlap_policy: OverlapPolicy = OverlapPolicy.SKIP
    retry: Retry = Field(default_factory=Retry)
    cutover_at: Instant | None = None
    horizon: Duration = timedelta(days=14)
    business_period: str | None = None
    runs_on: RunsOn | None = None
    #: Wake this machine from suspend for each run, where the OS allows (core/desktop/wake/).
    wake_system: bool = Field(default=False, strict=True)
    alerts: Annotated[list[AlertRoute] | None, _WhenPresent()] = None
    task: Annotated[Task | None, _WhenPresent()] = None

    @field_validator("schedule_id")
    @classmethod
    def _schedule_id(cls, value: str) -> str:
        if not SCHEDULE_ID.fullmatch(value):
            raise ValueError(
                f"{shown(value)} must be 1-64 characters of lowercase letters, digits, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        return value

    @field_validator("tzdb_version")
    @classmethod
    def _tzdb_version(cls, value: str | None) -> str | None:
        if value is not None and not TZDB_VERSION.fullmatch(value):
            raise ValueError(f"{shown(value)} is not a time zone database version such as 2025b")
        return value

    @field_validator("horizon", "every", "delay")
    @classmethod
    def _positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value <= timedelta(0):
            raise ValueError("must be longer than zero")
        return value

    @field_validator("business_period")
    @classmethod
    def _period(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
            if names - {"nominal"}:
                raise ValueError(
                    f"unknown field(s) {sorted(names - {'nominal'})}; only {{nominal:FORMAT}} is available"
                )
            value.format(nominal=datetime(2026, 1, 2, 3, 4, 5))
            longest = value.format(nominal=_LONGEST_NOMINAL)
        except (ValueError, IndexError, KeyError) as exc:
            raise ValueError(f"{shown(value)} is not a valid period template: {shown(str(exc))}") from None
        if len(longest) > MAX_PERIOD_CHARS:
            raise ValueError(
                f"gives periods of up to {len(longest):,} characters (e.g. {shown(longest)}); "
                f"a period is at most {MAX_PERIOD_CHARS}"
            )
        return value

    @field_validator("alerts")
    @classmethod
    def _alerts(cls, value: list[AlertRoute] | None) -> list[AlertRoute] | None:
        twice = _twice([route.route_text() for route in value or []])
        if twice:
            raise ValueError(f"{shown(twice[0])} is listed twice; give each route once with all its states in on")
        return value

    @field_validator("runs_on", mode="before")
    @classmethod
    def _runs_on(cls, value: Any) -> Any:
        return runs_on_value(value)

    # Effective values -------------------------------------------------------
    @property
    def effective_gap_policy(self) -> GapPolicy:
        return self.gap_policy or GapPolicy.SHIFT_FORWARD

    @property
    def effective_fold_policy(self) -> FoldPolicy:
        return self.fold_policy or FoldPolicy.FIRST_ONLY

    @property
    def effective_max_catch_up(self) -> int | None:
        if self.misfire_policy is not MisfirePolicy.CATCH_UP_BOUNDED:
            return None
        return self.max_catch_up if self.max_catch_up is not None else 1


#: Which keys each kind of schedule requires and which it refuses.
KIND_KEYS: dict[Kind, tuple[set[str], set[str]]] = {
    # kind: (required, forbidden)
    Kind.CALENDAR: ({"rule", "start", "gapPolicy", "foldPolicy"}, {"every", "anchor", "delay"}),
    Kind.INTERVAL: (
        {"every", "anchor"},
        {"rule", "start", "gapPolicy", "foldPolicy", "delay", "businessCalendar", "holidayPolicy"},
    ),
    Kind.AFTER_COMPLETION: ({"delay", "start"}, {"rule", "every", "anchor", "businessCalendar", "holidayPolicy"}),
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of scheduleSpec.v1, for editors."""
    schema = ScheduleSpec.model_json_schema(by_alias=True, mode="validation", schema_generator=_SpecJsonSchema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://tidemark.invalid/schema/scheduleSpec.v1.json"
    schema["title"] = "scheduleSpec.v1"
    schema["description"] = "One revision of a Tidemark schedule."
    return schema
