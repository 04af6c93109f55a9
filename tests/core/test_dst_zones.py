"""Gaps and folds in real zones under every policy (docs/contract.md §2).

Every expected instant below was worked out by hand from the zone's facts
(offset before and after, the transition instant) as listed by
``core.time.zones.transitions`` for the installed tzdata, and is written literally.

Gap facts: ``pre_gap_utc`` is L read with the offset before the gap (SKIP's
position and SHIFT_BY_GAP's instant); ``transition_utc`` is where
SHIFT_FORWARD lands. Fold facts: the earlier and the later reading of L.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from helpers import compiled, first_n, make_interval_spec, rows_between, rows_near, single_nominal_spec, view

from core.enums import Status
from core.recurrence.occurrence import Occurrence
from core.time.zones import get_zone

#: Every case runs through the fast path and the general one (tests/core/conftest.py).
pytestmark = pytest.mark.usefixtures("expansion_path")

GAP_POLICIES = ["SKIP", "SHIFT_FORWARD", "SHIFT_BY_GAP"]
FOLD_POLICIES = ["FIRST_ONLY", "SECOND_ONLY", "BOTH"]

# zone, nominal L, pre_gap_utc, shift_by_gap_local, transition_utc, shift_forward_local, reason
GAP_FACTS = [
    pytest.param(
        "America/New_York", "2026-03-08T02:30:00",
        "2026-03-08T07:30:00Z", "2026-03-08T03:30:00-04:00",
        "2026-03-08T07:00:00Z", "2026-03-08T03:00:00-04:00",
        "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT",
        id="new_york_spring_gap_0230",
    ),
    pytest.param(
        "Europe/Berlin", "2026-03-29T02:30:00",
        "2026-03-29T01:30:00Z", "2026-03-29T03:30:00+02:00",
        "2026-03-29T01:00:00Z", "2026-03-29T03:00:00+02:00",
        "02:30 does not exist on 2026-03-29 in Europe/Berlin: clocks jump from 02:00 CET to 03:00 CEST",
        id="berlin_spring_gap_0230",
    ),
    pytest.param(
        "Europe/London", "2026-03-29T01:30:00",
        "2026-03-29T01:30:00Z", "2026-03-29T02:30:00+01:00",
        "2026-03-29T01:00:00Z", "2026-03-29T02:00:00+01:00",
        "01:30 does not exist on 2026-03-29 in Europe/London: clocks jump from 01:00 GMT to 02:00 BST",
        id="london_spring_gap_0130",
    ),
    pytest.param(
        # Irish law makes IST (summer) the standard time and GMT "negative DST";
        # the offsets still jump forward in March like anywhere else.
        "Europe/Dublin", "2026-03-29T01:30:00",
        "2026-03-29T01:30:00Z", "2026-03-29T02:30:00+01:00",
        "2026-03-29T01:00:00Z", "2026-03-29T02:00:00+01:00",
        "01:30 does not exist on 2026-03-29 in Europe/Dublin: clocks jump from 01:00 GMT to 02:00 IST",
        id="dublin_negative_dst_gap_0130",
    ),
    pytest.param(
        "Australia/Lord_Howe", "2026-10-04T02:15:00",
        "2026-10-03T15:45:00Z", "2026-10-04T02:45:00+11:00",
        "2026-10-03T15:30:00Z", "2026-10-04T02:30:00+11:00",
        "02:15 does not exist on 2026-10-04 in Australia/Lord_Howe: clocks jump from 02:00 +1030 to 02:30 +11",
        id="lord_howe_30min_gap_0215",
    ),
    pytest.param(
        "Antarctica/Troll", "2026-03-29T02:00:00",
        "2026-03-29T02:00:00Z", "2026-03-29T04:00:00+02:00",
        "2026-03-29T01:00:00Z", "2026-03-29T03:00:00+02:00",
        "02:00 does not exist on 2026-03-29 in Antarctica/Troll: clocks jump from 01:00 +00 to 03:00 +02",
        id="troll_2h_gap_0200",
    ),
    pytest.param(
        "Antarctica/Troll", "2026-03-29T01:00:00",
        "2026-03-29T01:00:00Z", "2026-03-29T03:00:00+02:00",
        "2026-03-29T01:00:00Z", "2026-03-29T03:00:00+02:00",
        "01:00 does not exist on 2026-03-29 in Antarctica/Troll: clocks jump from 01:00 +00 to 03:00 +02",
        id="troll_2h_gap_first_minute_0100",
    ),
    pytest.param(
        "Antarctica/Troll", "2026-03-29T02:59:00",
        "2026-03-29T02:59:00Z", "2026-03-29T04:59:00+02:00",
        "2026-03-29T01:00:00Z", "2026-03-29T03:00:00+02:00",
        "02:59 does not exist on 2026-03-29 in Antarctica/Troll: clocks jump from 01:00 +00 to 03:00 +02",
        id="troll_2h_gap_last_minute_0259",
    ),
    pytest.param(
        "Pacific/Apia", "2011-12-30T12:00:00",
        "2011-12-30T22:00:00Z", "2011-12-31T12:00:00+14:00",
        "2011-12-30T10:00:00Z", "2011-12-31T00:00:00+14:00",
        "12:00 does not exist on 2011-12-30 in Pacific/Apia: "
        "clocks jump from 2011-12-30 00:00 -10 to 2011-12-31 00:00 +14",
        id="apia_skipped_day_1200",
    ),
    pytest.param(
        "Pacific/Apia", "2011-12-30T00:00:00",
        "2011-12-30T10:00:00Z", "2011-12-31T00:00:00+14:00",
        "2011-12-30T10:00:00Z", "2011-12-31T00:00:00+14:00",
        "00:00 does not exist on 2011-12-30 in Pacific/Apia: "
        "clocks jump from 2011-12-30 00:00 -10 to 2011-12-31 00:00 +14",
        id="apia_skipped_day_midnight",
    ),
    pytest.param(
        # The data skips 1993-08-21 (not the 20th): -12 -> +12 at its midnight.
        "Pacific/Kwajalein", "1993-08-21T09:00:00",
        "1993-08-21T21:00:00Z", "1993-08-22T09:00:00+12:00",
        "1993-08-21T12:00:00Z", "1993-08-22T00:00:00+12:00",
        "09:00 does not exist on 1993-08-21 in Pacific/Kwajalein: "
        "clocks jump from 1993-08-21 00:00 -12 to 1993-08-22 00:00 +12",
        id="kwajalein_skipped_day_0900",
    ),
    pytest.param(
        "America/Havana", "2025-03-09T00:00:00",
        "2025-03-09T05:00:00Z", "2025-03-09T01:00:00-04:00",
        "2025-03-09T05:00:00Z", "2025-03-09T01:00:00-04:00",
        "00:00 does not exist on 2025-03-09 in America/Havana: clocks jump from 00:00 CST to 01:00 CDT",
        id="havana_midnight_gap_0000",
    ),
    pytest.param(
        "America/Havana", "2025-03-09T00:30:00",
        "2025-03-09T05:30:00Z", "2025-03-09T01:30:00-04:00",
        "2025-03-09T05:00:00Z", "2025-03-09T01:00:00-04:00",
        "00:30 does not exist on 2025-03-09 in America/Havana: clocks jump from 00:00 CST to 01:00 CDT",
        id="havana_midnight_gap_0030",
    ),
    pytest.param(
        "America/Santiago", "2025-09-07T00:00:00",
        "2025-09-07T04:00:00Z", "2025-09-07T01:00:00-03:00",
        "2025-09-07T04:00:00Z", "2025-09-07T01:00:00-03:00",
        "00:00 does not exist on 2025-09-07 in America/Santiago: clocks jump from 00:00 -04 to 01:00 -03",
        id="santiago_midnight_gap_0000",
    ),
    pytest.param(
        "Asia/Beirut", "2025-03-30T00:15:00",
        "2025-03-29T22:15:00Z", "2025-03-30T01:15:00+03:00",
        "2025-03-29T22:00:00Z", "2025-03-30T01:00:00+03:00",
        "00:15 does not exist on 2025-03-30 in Asia/Beirut: clocks jump from 00:00 EET to 01:00 EEST",
        id="beirut_midnight_gap_0015",
    ),
    pytest.param(
        "America/Asuncion", "2024-10-06T00:30:00",
        "2024-10-06T04:30:00Z", "2024-10-06T01:30:00-03:00",
        "2024-10-06T04:00:00Z", "2024-10-06T01:00:00-03:00",
        "00:30 does not exist on 2024-10-06 in America/Asuncion: clocks jump from 00:00 -04 to 01:00 -03",
        id="asuncion_midnight_gap_0030",
    ),
    pytest.param(
        "Asia/Tehran", "2022-03-22T00:30:00",
        "2022-03-21T21:00:00Z", "2022-03-22T01:30:00+04:30",
        "2022-03-21T20:30:00Z", "2022-03-22T01:00:00+04:30",
        "00:30 does not exist on 2022-03-22 in Asia/Tehran: clocks jump from 00:00 +0330 to 01:00 +0430",
        id="tehran_midnight_gap_0030",
    ),
    pytest.param(
        "Asia/Amman", "2022-02-25T00:30:00",
        "2022-02-24T22:30:00Z", "2022-02-25T01:30:00+03:00",
        "2022-02-24T22:00:00Z", "2022-02-25T01:00:00+03:00",
        "00:30 does not exist on 2022-02-25 in Asia/Amman: clocks jump from 00:00 EET to 01:00 EEST",
        id="amman_last_midnight_gap_0030",
    ),
    pytest.param(
        "America/Sao_Paulo", "2018-11-04T00:30:00",
        "2018-11-04T03:30:00Z", "2018-11-04T01:30:00-02:00",
        "2018-11-04T03:00:00Z", "2018-11-04T01:00:00-02:00",
        "00:30 does not exist on 2018-11-04 in America/Sao_Paulo: clocks jump from 00:00 -03 to 01:00 -02",
        id="sao_paulo_last_midnight_gap_0030",
    ),
    pytest.param(
        # Not DST: Volgograd moved from Moscow time to +04 for good (until 2020).
        "Europe/Volgograd", "2018-10-28T02:30:00",
        "2018-10-27T23:30:00Z", "2018-10-28T03:30:00+04:00",
        "2018-10-27T23:00:00Z", "2018-10-28T03:00:00+04:00",
        "02:30 does not exist on 2018-10-28 in Europe/Volgograd: clocks jump from 02:00 MSK to 03:00 +04",
        id="volgograd_offset_change_not_dst_0230",
    ),
    pytest.param(
        # Not DST: Venezuela left -04:30 for -04:00, a 30-minute gap.
        "America/Caracas", "2016-05-01T02:45:00",
        "2016-05-01T07:15:00Z", "2016-05-01T03:15:00-04:00",
        "2016-05-01T07:00:00Z", "2016-05-01T03:00:00-04:00",
        "02:45 does not exist on 2016-05-01 in America/Caracas: clocks jump from 02:30 -0430 to 03:00 -04",
        id="caracas_offset_change_not_dst_0245",
    ),
    pytest.param(
        "Pacific/Chatham", "2025-09-28T03:00:00",
        "2025-09-27T14:15:00Z", "2025-09-28T04:00:00+13:45",
        "2025-09-27T14:00:00Z", "2025-09-28T03:45:00+13:45",
        "03:00 does not exist on 2025-09-28 in Pacific/Chatham: clocks jump from 02:45 +1245 to 03:45 +1345",
        id="chatham_45min_offset_gap_0300",
    ),
    pytest.param(
        "America/St_Johns", "2025-03-09T02:30:00",
        "2025-03-09T06:00:00Z", "2025-03-09T03:30:00-02:30",
        "2025-03-09T05:30:00Z", "2025-03-09T03:00:00-02:30",
        "02:30 does not exist on 2025-03-09 in America/St_Johns: clocks jump from 02:00 NST to 03:00 NDT",
        id="st_johns_half_hour_offset_gap_0230",
    ),
    pytest.param(
        "America/Mexico_City", "2022-04-03T02:30:00",
        "2022-04-03T08:30:00Z", "2022-04-03T03:30:00-05:00",
        "2022-04-03T08:00:00Z", "2022-04-03T03:00:00-05:00",
        "02:30 does not exist on 2022-04-03 in America/Mexico_City: clocks jump from 02:00 CST to 03:00 CDT",
        id="mexico_city_last_gap_0230",
    ),
]  # fmt: skip

# zone, nominal L, first_utc, first_local, second_utc, second_local, reason
FOLD_FACTS = [
    pytest.param(
        "America/New_York", "2026-11-01T01:30:00",
        "2026-11-01T05:30:00Z", "2026-11-01T01:30:00-04:00",
        "2026-11-01T06:30:00Z", "2026-11-01T01:30:00-05:00",
        "01:30 happens twice on 2026-11-01 in America/New_York: clocks fall back from 02:00 EDT to 01:00 EST",
        id="new_york_fall_fold_0130",
    ),
    pytest.param(
        "America/New_York", "2026-11-01T01:00:00",
        "2026-11-01T05:00:00Z", "2026-11-01T01:00:00-04:00",
        "2026-11-01T06:00:00Z", "2026-11-01T01:00:00-05:00",
        "01:00 happens twice on 2026-11-01 in America/New_York: clocks fall back from 02:00 EDT to 01:00 EST",
        id="new_york_fall_fold_first_minute_0100",
    ),
    pytest.param(
        "Europe/Berlin", "2026-10-25T02:30:00",
        "2026-10-25T00:30:00Z", "2026-10-25T02:30:00+02:00",
        "2026-10-25T01:30:00Z", "2026-10-25T02:30:00+01:00",
        "02:30 happens twice on 2026-10-25 in Europe/Berlin: clocks fall back from 03:00 CEST to 02:00 CET",
        id="berlin_fall_fold_0230",
    ),
    pytest.param(
        "Europe/London", "2026-10-25T01:30:00",
        "2026-10-25T00:30:00Z", "2026-10-25T01:30:00+01:00",
        "2026-10-25T01:30:00Z", "2026-10-25T01:30:00+00:00",
        "01:30 happens twice on 2026-10-25 in Europe/London: clocks fall back from 02:00 BST to 01:00 GMT",
        id="london_fall_fold_0130",
    ),
    pytest.param(
        "Europe/Dublin", "2026-10-25T01:30:00",
        "2026-10-25T00:30:00Z", "2026-10-25T01:30:00+01:00",
        "2026-10-25T01:30:00Z", "2026-10-25T01:30:00+00:00",
        "01:30 happens twice on 2026-10-25 in Europe/Dublin: clocks fall back from 02:00 IST to 01:00 GMT",
        id="dublin_negative_dst_fold_0130",
    ),
    pytest.param(
        "Australia/Lord_Howe", "2026-04-05T01:45:00",
        "2026-04-04T14:45:00Z", "2026-04-05T01:45:00+11:00",
        "2026-04-04T15:15:00Z", "2026-04-05T01:45:00+10:30",
        "01:45 happens twice on 2026-04-05 in Australia/Lord_Howe: clocks fall back from 02:00 +11 to 01:30 +1030",
        id="lord_howe_30min_fold_0145",
    ),
    pytest.param(
        "Antarctica/Troll", "2026-10-25T02:00:00",
        "2026-10-25T00:00:00Z", "2026-10-25T02:00:00+02:00",
        "2026-10-25T02:00:00Z", "2026-10-25T02:00:00+00:00",
        "02:00 happens twice on 2026-10-25 in Antarctica/Troll: clocks fall back from 03:00 +02 to 01:00 +00",
        id="troll_2h_fold_0200",
    ),
    pytest.param(
        "America/Havana", "2025-11-02T00:00:00",
        "2025-11-02T04:00:00Z", "2025-11-02T00:00:00-04:00",
        "2025-11-02T05:00:00Z", "2025-11-02T00:00:00-05:00",
        "00:00 happens twice on 2025-11-02 in America/Havana: clocks fall back from 01:00 CDT to 00:00 CST",
        id="havana_midnight_fold_0000",
    ),
    pytest.param(
        "America/Havana", "2025-11-02T00:30:00",
        "2025-11-02T04:30:00Z", "2025-11-02T00:30:00-04:00",
        "2025-11-02T05:30:00Z", "2025-11-02T00:30:00-05:00",
        "00:30 happens twice on 2025-11-02 in America/Havana: clocks fall back from 01:00 CDT to 00:00 CST",
        id="havana_midnight_fold_0030",
    ),
    pytest.param(
        "America/Santiago", "2025-04-05T23:30:00",
        "2025-04-06T02:30:00Z", "2025-04-05T23:30:00-03:00",
        "2025-04-06T03:30:00Z", "2025-04-05T23:30:00-04:00",
        "23:30 happens twice on 2025-04-05 in America/Santiago: "
        "clocks fall back from 2025-04-06 00:00 -03 to 2025-04-05 23:00 -04",
        id="santiago_midnight_fold_2330",
    ),
    pytest.param(
        "Asia/Beirut", "2025-10-25T23:30:00",
        "2025-10-25T20:30:00Z", "2025-10-25T23:30:00+03:00",
        "2025-10-25T21:30:00Z", "2025-10-25T23:30:00+02:00",
        "23:30 happens twice on 2025-10-25 in Asia/Beirut: "
        "clocks fall back from 2025-10-26 00:00 EEST to 2025-10-25 23:00 EET",
        id="beirut_midnight_fold_2330",
    ),
    pytest.param(
        "America/Asuncion", "2024-03-23T23:15:00",
        "2024-03-24T02:15:00Z", "2024-03-23T23:15:00-03:00",
        "2024-03-24T03:15:00Z", "2024-03-23T23:15:00-04:00",
        "23:15 happens twice on 2024-03-23 in America/Asuncion: "
        "clocks fall back from 2024-03-24 00:00 -03 to 2024-03-23 23:00 -04",
        id="asuncion_midnight_fold_2315",
    ),
    pytest.param(
        "Asia/Tehran", "2022-09-21T23:30:00",
        "2022-09-21T19:00:00Z", "2022-09-21T23:30:00+04:30",
        "2022-09-21T20:00:00Z", "2022-09-21T23:30:00+03:30",
        "23:30 happens twice on 2022-09-21 in Asia/Tehran: "
        "clocks fall back from 2022-09-22 00:00 +0430 to 2022-09-21 23:00 +0330",
        id="tehran_midnight_fold_2330",
    ),
    pytest.param(
        "America/Sao_Paulo", "2019-02-16T23:30:00",
        "2019-02-17T01:30:00Z", "2019-02-16T23:30:00-02:00",
        "2019-02-17T02:30:00Z", "2019-02-16T23:30:00-03:00",
        "23:30 happens twice on 2019-02-16 in America/Sao_Paulo: "
        "clocks fall back from 2019-02-17 00:00 -02 to 2019-02-16 23:00 -03",
        id="sao_paulo_last_midnight_fold_2330",
    ),
    pytest.param(
        # Not DST: Volgograd went back from +04 to Moscow time.
        "Europe/Volgograd", "2020-12-27T01:30:00",
        "2020-12-26T21:30:00Z", "2020-12-27T01:30:00+04:00",
        "2020-12-26T22:30:00Z", "2020-12-27T01:30:00+03:00",
        "01:30 happens twice on 2020-12-27 in Europe/Volgograd: clocks fall back from 02:00 +04 to 01:00 MSK",
        id="volgograd_offset_change_not_dst_0130",
    ),
    pytest.param(
        # Not DST: Venezuela moved to -04:30 in 2007, a 30-minute fold.
        "America/Caracas", "2007-12-09T02:45:00",
        "2007-12-09T06:45:00Z", "2007-12-09T02:45:00-04:00",
        "2007-12-09T07:15:00Z", "2007-12-09T02:45:00-04:30",
        "02:45 happens twice on 2007-12-09 in America/Caracas: clocks fall back from 03:00 -04 to 02:30 -0430",
        id="caracas_offset_change_not_dst_0245",
    ),
    pytest.param(
        "Pacific/Chatham", "2025-04-06T03:00:00",
        "2025-04-05T13:15:00Z", "2025-04-06T03:00:00+13:45",
        "2025-04-05T14:15:00Z", "2025-04-06T03:00:00+12:45",
        "03:00 happens twice on 2025-04-06 in Pacific/Chatham: clocks fall back from 03:45 +1345 to 02:45 +1245",
        id="chatham_45min_offset_fold_0300",
    ),
    pytest.param(
        "America/St_Johns", "2025-11-02T01:30:00",
        "2025-11-02T04:00:00Z", "2025-11-02T01:30:00-02:30",
        "2025-11-02T05:00:00Z", "2025-11-02T01:30:00-03:30",
        "01:30 happens twice on 2025-11-02 in America/St_Johns: clocks fall back from 02:00 NDT to 01:00 NST",
        id="st_johns_half_hour_offset_fold_0130",
    ),
    pytest.param(
        "America/Mexico_City", "2022-10-30T01:30:00",
        "2022-10-30T06:30:00Z", "2022-10-30T01:30:00-05:00",
        "2022-10-30T07:30:00Z", "2022-10-30T01:30:00-06:00",
        "01:30 happens twice on 2022-10-30 in America/Mexico_City: clocks fall back from 02:00 CDT to 01:00 CST",
        id="mexico_city_last_fold_0130",
    ),
    pytest.param(
        "Pacific/Apia", "2011-04-02T03:30:00",
        "2011-04-02T13:30:00Z", "2011-04-02T03:30:00-10:00",
        "2011-04-02T14:30:00Z", "2011-04-02T03:30:00-11:00",
        "03:30 happens twice on 2011-04-02 in Pacific/Apia: clocks fall back from 04:00 -10 to 03:00 -11",
        id="apia_fold_0330",
    ),
]  # fmt: skip

# Zones that stopped changing their clocks: wall times that used to fall in a
# gap or a fold now have exactly one reading. zone, L, resolvedUtc, resolvedLocal
ABOLISHED = [
    pytest.param("America/Sao_Paulo", "2019-11-03T00:30:00", "2019-11-03T03:30:00Z", "2019-11-03T00:30:00-03:00",
                 id="sao_paulo_2019_former_gap"),
    pytest.param("America/Sao_Paulo", "2020-02-15T23:30:00", "2020-02-16T02:30:00Z", "2020-02-15T23:30:00-03:00",
                 id="sao_paulo_2020_former_fold"),
    pytest.param("America/Mexico_City", "2023-04-02T02:30:00", "2023-04-02T08:30:00Z", "2023-04-02T02:30:00-06:00",
                 id="mexico_city_2023_former_gap"),
    pytest.param("America/Mexico_City", "2023-10-29T01:30:00", "2023-10-29T07:30:00Z", "2023-10-29T01:30:00-06:00",
                 id="mexico_city_2023_former_fold"),
    pytest.param("Asia/Amman", "2022-10-28T00:30:00", "2022-10-27T21:30:00Z", "2022-10-28T00:30:00+03:00",
                 id="amman_2022_former_fold"),
    pytest.param("Asia/Amman", "2023-02-24T00:30:00", "2023-02-23T21:30:00Z", "2023-02-24T00:30:00+03:00",
                 id="amman_2023_former_gap"),
    pytest.param("Europe/Istanbul", "2016-10-30T03:30:00", "2016-10-30T00:30:00Z", "2016-10-30T03:30:00+03:00",
                 id="istanbul_2016_former_fold"),
    pytest.param("Europe/Istanbul", "2017-03-26T03:30:00", "2017-03-26T00:30:00Z", "2017-03-26T03:30:00+03:00",
                 id="istanbul_2017_former_gap"),
    pytest.param("America/Asuncion", "2025-03-22T23:30:00", "2025-03-23T02:30:00Z", "2025-03-22T23:30:00-03:00",
                 id="asuncion_2025_former_fold"),
    pytest.param("America/Asuncion", "2025-10-05T00:30:00", "2025-10-05T03:30:00Z", "2025-10-05T00:30:00-03:00",
                 id="asuncion_2025_former_gap"),
]  # fmt: skip


def _only_row(zone: str, nominal: str, gap: str = "SKIP", fold: str = "FIRST_ONLY") -> list[Occurrence]:
    return rows_near(single_nominal_spec(zone, nominal, gapPolicy=gap, foldPolicy=fold), nominal)


def _zones(*tables: list[Any]) -> set[str]:
    return {p.values[0] for table in tables for p in table}


def test_tables_cover_at_least_twelve_real_zones() -> None:
    assert len(_zones(GAP_FACTS, FOLD_FACTS)) >= 12
    assert len(_zones(GAP_FACTS, FOLD_FACTS, ABOLISHED)) >= 18


# --- gaps -------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", GAP_POLICIES)
@pytest.mark.parametrize(
    ("zone", "nominal", "pre_gap_utc", "by_gap_local", "transition_utc", "forward_local", "reason"), GAP_FACTS
)
def test_gap(
    zone: str,
    nominal: str,
    pre_gap_utc: str,
    by_gap_local: str,
    transition_utc: str,
    forward_local: str,
    reason: str,
    policy: str,
) -> None:
    rows = _only_row(zone, nominal, gap=policy)
    assert len(rows) == 1
    row = rows[0]
    expected = {
        "SKIP": (nominal, 0, "SKIPPED_GAP", None, None, pre_gap_utc),
        "SHIFT_FORWARD": (nominal, 0, "SHIFTED", transition_utc, forward_local, transition_utc),
        "SHIFT_BY_GAP": (nominal, 0, "SHIFTED", pre_gap_utc, by_gap_local, pre_gap_utc),
    }[policy]
    assert view(row) == expected
    assert row.reason is not None
    if policy == "SKIP":
        assert row.reason == reason
        assert row.logical_slot_id is None
    else:
        # Says where it went (the new wall clock and its abbreviation) and why.
        assert row.reason.startswith(reason + "; shifted ")
        assert f"(gapPolicy {policy})" in row.reason
        new_local = expected[4]
        assert new_local is not None
        assert f"{new_local[11:16]} {row.abbreviation}" in row.reason
        assert row.logical_slot_id is not None


# --- folds ------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", FOLD_POLICIES)
@pytest.mark.parametrize(
    ("zone", "nominal", "first_utc", "first_local", "second_utc", "second_local", "reason"), FOLD_FACTS
)
def test_fold(
    zone: str,
    nominal: str,
    first_utc: str,
    first_local: str,
    second_utc: str,
    second_local: str,
    reason: str,
    policy: str,
) -> None:
    rows = _only_row(zone, nominal, fold=policy)
    first_runs = {"FIRST_ONLY": True, "SECOND_ONLY": False, "BOTH": True}[policy]
    second_runs = {"FIRST_ONLY": False, "SECOND_ONLY": True, "BOTH": True}[policy]
    expected = [
        (nominal, 0, "SCHEDULED", first_utc, first_local, first_utc)
        if first_runs
        else (nominal, 0, "SKIPPED_FOLD", None, None, first_utc),
        (nominal, 1, "SCHEDULED", second_utc, second_local, second_utc)
        if second_runs
        else (nominal, 1, "SKIPPED_FOLD", None, None, second_utc),
    ]
    assert [view(r) for r in rows] == expected
    for row in rows:
        assert row.reason is not None
        assert row.reason.startswith(reason + "; ")
        assert f"(foldPolicy {policy})" in row.reason
    # The abbreviation of each reading is named in its own reason.
    abbr_first, abbr_second = rows[0].abbreviation, rows[1].abbreviation
    assert abbr_first and abbr_second and abbr_first != abbr_second
    assert f"({abbr_first})" in (rows[0].reason or "")
    assert f"({abbr_second})" in (rows[1].reason or "")
    assert rows[0].occurrence_id != rows[1].occurrence_id


# --- one reading: next to a transition, and after DST was abolished -----------------------


@pytest.mark.parametrize(
    ("zone", "nominal", "resolved_utc", "resolved_local"),
    [
        pytest.param("America/New_York", "2026-03-08T01:59:00", "2026-03-08T06:59:00Z", "2026-03-08T01:59:00-05:00",
                     id="new_york_minute_before_gap"),
        pytest.param("America/New_York", "2026-03-08T03:00:00", "2026-03-08T07:00:00Z", "2026-03-08T03:00:00-04:00",
                     id="new_york_first_minute_after_gap"),
        pytest.param("America/New_York", "2026-11-01T00:59:00", "2026-11-01T04:59:00Z", "2026-11-01T00:59:00-04:00",
                     id="new_york_minute_before_fold"),
        pytest.param("America/New_York", "2026-11-01T02:00:00", "2026-11-01T07:00:00Z", "2026-11-01T02:00:00-05:00",
                     id="new_york_first_minute_after_fold"),
        pytest.param("Australia/Lord_Howe", "2026-04-05T02:00:00", "2026-04-04T15:30:00Z", "2026-04-05T02:00:00+10:30",
                     id="lord_howe_first_minute_after_fold"),
        pytest.param("Australia/Lord_Howe", "2026-10-04T02:30:00", "2026-10-03T15:30:00Z", "2026-10-04T02:30:00+11:00",
                     id="lord_howe_first_minute_after_gap"),
        pytest.param("Pacific/Apia", "2011-12-29T23:59:00", "2011-12-30T09:59:00Z", "2011-12-29T23:59:00-10:00",
                     id="apia_last_minute_before_skipped_day"),
        pytest.param("Pacific/Apia", "2011-12-31T00:00:00", "2011-12-30T10:00:00Z", "2011-12-31T00:00:00+14:00",
                     id="apia_first_minute_after_skipped_day"),
        pytest.param("America/Santiago", "2025-04-06T00:00:00", "2025-04-06T04:00:00Z", "2025-04-06T00:00:00-04:00",
                     id="santiago_midnight_after_fold"),
        pytest.param("America/Havana", "2025-03-09T01:00:00", "2025-03-09T05:00:00Z", "2025-03-09T01:00:00-04:00",
                     id="havana_first_minute_after_midnight_gap"),
        *ABOLISHED,
    ],
)  # fmt: skip
@pytest.mark.parametrize(("gap", "fold"), [("SKIP", "BOTH"), ("SHIFT_BY_GAP", "SECOND_ONLY")])
def test_single_reading(zone: str, nominal: str, resolved_utc: str, resolved_local: str, gap: str, fold: str) -> None:
    rows = _only_row(zone, nominal, gap=gap, fold=fold)
    assert [view(r) for r in rows] == [(nominal, 0, "SCHEDULED", resolved_utc, resolved_local, resolved_utc)]
    assert rows[0].reason is None


@pytest.mark.parametrize(
    ("zone", "rule", "start", "window", "offset"),
    [
        pytest.param("America/Sao_Paulo", "FREQ=DAILY;BYHOUR=0,23;BYMINUTE=30", "2019-10-01T00:00:00",
                     ("2019-10-01T00:00:00Z", "2020-04-01T00:00:00Z"), "-03:00", id="sao_paulo_season_2019_2020"),
        pytest.param("America/Mexico_City", "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30", "2023-03-01T00:00:00",
                     ("2023-03-01T00:00:00Z", "2023-11-30T00:00:00Z"), "-06:00", id="mexico_city_2023"),
        pytest.param("Asia/Amman", "FREQ=DAILY;BYHOUR=0;BYMINUTE=30", "2022-10-01T00:00:00",
                     ("2022-10-01T00:00:00Z", "2023-11-01T00:00:00Z"), "+03:00", id="amman_2022_2023"),
        pytest.param("America/Asuncion", "FREQ=DAILY;BYHOUR=0,23;BYMINUTE=30", "2025-01-01T00:00:00",
                     ("2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"), "-03:00", id="asuncion_2025"),
    ],
)  # fmt: skip
def test_abolished_dst_season_resolves_as_ordinary(
    zone: str, rule: str, start: str, window: tuple[str, str], offset: str
) -> None:
    spec = compiled(timeZone=zone, rule=rule, start=start, gapPolicy="SKIP", foldPolicy="BOTH")
    rows = rows_between(spec, *window)
    assert len(rows) > 100
    assert {(r.status, r.fold_ordinal, r.to_json()["utcOffset"], r.reason) for r in rows} == {
        (Status.SCHEDULED, 0, offset, None)
    }


# --- the contract's own examples --------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "nominal", "policy", "resolved_utc", "resolved_local"),
    [
        pytest.param("America/New_York", "2026-03-08T02:30:00", "SHIFT_FORWARD", "2026-03-08T07:00:00Z",
                     "2026-03-08T03:00:00-04:00", id="contract_new_york_shift_forward"),
        pytest.param("America/New_York", "2026-03-08T02:30:00", "SHIFT_BY_GAP", "2026-03-08T07:30:00Z",
                     "2026-03-08T03:30:00-04:00", id="contract_new_york_shift_by_gap"),
        pytest.param("Australia/Lord_Howe", "2026-10-04T02:15:00", "SHIFT_BY_GAP", "2026-10-03T15:45:00Z",
                     "2026-10-04T02:45:00+11:00", id="contract_lord_howe_0215_to_0245"),
    ],
)  # fmt: skip
def test_contract_examples(zone: str, nominal: str, policy: str, resolved_utc: str, resolved_local: str) -> None:
    hour, minute = int(nominal[11:13]), int(nominal[14:16])
    rule = f"FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}"
    spec = compiled(timeZone=zone, rule=rule, start="2026-01-01T00:00:00", gapPolicy=policy)
    (row,) = rows_near(spec, nominal)
    assert (row.status, row.resolved_utc, row.to_json()["resolvedLocal"]) == (
        Status.SHIFTED,
        resolved_utc,
        resolved_local,
    )


def test_contract_reason_text_and_preview_row() -> None:
    spec = compiled(gapPolicy="SKIP")  # daily 02:30 in New York
    (row,) = rows_near(spec, "2026-03-08T02:30:00")
    assert row.to_json() | {"occurrenceId": None} == {
        "occurrenceId": None,
        "logicalSlotId": None,
        "nominalLocal": "2026-03-08T02:30:00",
        "foldOrdinal": 0,
        "status": "SKIPPED_GAP",
        "resolvedUtc": None,
        "resolvedLocal": None,
        "utcOffset": None,
        "positionUtc": "2026-03-08T07:30:00Z",
        "reason": "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT",
        "businessPeriod": None,
        "dispatchUtc": None,
    }


def test_shifted_reasons_say_where_the_row_went() -> None:
    forward = rows_near(compiled(gapPolicy="SHIFT_FORWARD"), "2026-03-08T02:30:00")[0]
    by_gap = rows_near(compiled(gapPolicy="SHIFT_BY_GAP"), "2026-03-08T02:30:00")[0]
    assert forward.reason == (
        "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT; "
        "shifted to 03:00 EDT, the first valid time after the gap (gapPolicy SHIFT_FORWARD)"
    )
    assert by_gap.reason == (
        "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT; "
        "shifted by the gap's length (1 h) to 03:30 EDT (gapPolicy SHIFT_BY_GAP)"
    )


# --- a whole daily series across each transition --------------------------------------------


@pytest.mark.parametrize(
    ("zone", "rule", "gap", "fold", "window", "expected"),
    [
        pytest.param(
            "America/New_York", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "SKIP", "FIRST_ONLY",
            ("2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"),
            [
                ("2026-03-07T02:30:00", 0, "SCHEDULED",
                 "2026-03-07T07:30:00Z", "2026-03-07T02:30:00-05:00", "2026-03-07T07:30:00Z"),
                ("2026-03-08T02:30:00", 0, "SKIPPED_GAP", None, None, "2026-03-08T07:30:00Z"),
                ("2026-03-09T02:30:00", 0, "SCHEDULED",
                 "2026-03-09T06:30:00Z", "2026-03-09T02:30:00-04:00", "2026-03-09T06:30:00Z"),
            ],
            id="new_york_daily_0230_skip",
        ),
        pytest.param(
            "America/New_York", "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "SKIP", "BOTH",
            ("2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
            [
                ("2026-10-31T01:30:00", 0, "SCHEDULED",
                 "2026-10-31T05:30:00Z", "2026-10-31T01:30:00-04:00", "2026-10-31T05:30:00Z"),
                ("2026-11-01T01:30:00", 0, "SCHEDULED",
                 "2026-11-01T05:30:00Z", "2026-11-01T01:30:00-04:00", "2026-11-01T05:30:00Z"),
                ("2026-11-01T01:30:00", 1, "SCHEDULED",
                 "2026-11-01T06:30:00Z", "2026-11-01T01:30:00-05:00", "2026-11-01T06:30:00Z"),
                ("2026-11-02T01:30:00", 0, "SCHEDULED",
                 "2026-11-02T06:30:00Z", "2026-11-02T01:30:00-05:00", "2026-11-02T06:30:00Z"),
            ],
            id="new_york_daily_0130_both",
        ),
        pytest.param(
            # Pacific/Apia's 2011-12-30 never happened: its row is shifted to the
            # next midnight, and 2011-12-31 12:00 still has its own row.
            "Pacific/Apia", "FREQ=DAILY;BYHOUR=12", "SHIFT_FORWARD", "FIRST_ONLY",
            ("2011-12-29T00:00:00Z", "2011-12-31T23:00:00Z"),
            [
                ("2011-12-29T12:00:00", 0, "SCHEDULED",
                 "2011-12-29T22:00:00Z", "2011-12-29T12:00:00-10:00", "2011-12-29T22:00:00Z"),
                ("2011-12-30T12:00:00", 0, "SHIFTED",
                 "2011-12-30T10:00:00Z", "2011-12-31T00:00:00+14:00", "2011-12-30T10:00:00Z"),
                ("2011-12-31T12:00:00", 0, "SCHEDULED",
                 "2011-12-30T22:00:00Z", "2011-12-31T12:00:00+14:00", "2011-12-30T22:00:00Z"),
                ("2012-01-01T12:00:00", 0, "SCHEDULED",
                 "2011-12-31T22:00:00Z", "2012-01-01T12:00:00+14:00", "2011-12-31T22:00:00Z"),
            ],
            id="apia_daily_noon_shift_forward",
        ),
        pytest.param(
            # Santiago's fold is 23:00-23:59 on the evening before the change date.
            "America/Santiago", "FREQ=DAILY;BYHOUR=23,0;BYMINUTE=30", "SKIP", "SECOND_ONLY",
            ("2025-04-05T00:00:00Z", "2025-04-06T12:00:00Z"),
            [
                ("2025-04-05T00:30:00", 0, "SCHEDULED",
                 "2025-04-05T03:30:00Z", "2025-04-05T00:30:00-03:00", "2025-04-05T03:30:00Z"),
                ("2025-04-05T23:30:00", 0, "SKIPPED_FOLD", None, None, "2025-04-06T02:30:00Z"),
                ("2025-04-05T23:30:00", 1, "SCHEDULED",
                 "2025-04-06T03:30:00Z", "2025-04-05T23:30:00-04:00", "2025-04-06T03:30:00Z"),
                ("2025-04-06T00:30:00", 0, "SCHEDULED",
                 "2025-04-06T04:30:00Z", "2025-04-06T00:30:00-04:00", "2025-04-06T04:30:00Z"),
            ],
            id="santiago_midnight_fold_second_only",
        ),
    ],
)  # fmt: skip
def test_daily_series_across_a_transition(
    zone: str, rule: str, gap: str, fold: str, window: tuple[str, str], expected: list[tuple[object, ...]]
) -> None:
    spec = compiled(timeZone=zone, rule=rule, start=window[0][:10] + "T00:00:00", gapPolicy=gap, foldPolicy=fold)
    assert [view(r) for r in rows_between(spec, *window)] == expected


# --- collisions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "rule", "start", "gap", "window", "expected", "duplicates"),
    [
        pytest.param(
            "America/New_York", "FREQ=HOURLY", "2026-03-08T00:00:00", "SHIFT_FORWARD",
            ("2026-03-08T05:00:00Z", "2026-03-08T09:00:00Z"),
            [
                ("2026-03-08T00:00:00", "SCHEDULED", "2026-03-08T05:00:00Z", "2026-03-08T05:00:00Z"),
                ("2026-03-08T01:00:00", "SCHEDULED", "2026-03-08T06:00:00Z", "2026-03-08T06:00:00Z"),
                ("2026-03-08T02:00:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:00:00Z"),
                ("2026-03-08T03:00:00", "SCHEDULED", "2026-03-08T07:00:00Z", "2026-03-08T07:00:00Z"),
                ("2026-03-08T04:00:00", "SCHEDULED", "2026-03-08T08:00:00Z", "2026-03-08T08:00:00Z"),
            ],
            {"2026-03-08T02:00:00": "2026-03-08T03:00:00"},
            id="hourly_shift_forward_new_york",
        ),
        pytest.param(
            "America/New_York", "FREQ=HOURLY", "2026-03-08T00:00:00", "SHIFT_BY_GAP",
            ("2026-03-08T06:00:00Z", "2026-03-08T08:00:00Z"),
            [
                ("2026-03-08T01:00:00", "SCHEDULED", "2026-03-08T06:00:00Z", "2026-03-08T06:00:00Z"),
                ("2026-03-08T02:00:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:00:00Z"),
                ("2026-03-08T03:00:00", "SCHEDULED", "2026-03-08T07:00:00Z", "2026-03-08T07:00:00Z"),
            ],
            {"2026-03-08T02:00:00": "2026-03-08T03:00:00"},
            id="hourly_shift_by_gap_new_york",
        ),
        pytest.param(
            "America/New_York", "FREQ=MINUTELY;INTERVAL=30", "2026-03-08T00:00:00", "SHIFT_FORWARD",
            ("2026-03-08T06:30:00Z", "2026-03-08T08:00:00Z"),
            [
                ("2026-03-08T01:30:00", "SCHEDULED", "2026-03-08T06:30:00Z", "2026-03-08T06:30:00Z"),
                ("2026-03-08T02:00:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:00:00Z"),
                ("2026-03-08T02:30:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:00:00Z"),
                ("2026-03-08T03:00:00", "SCHEDULED", "2026-03-08T07:00:00Z", "2026-03-08T07:00:00Z"),
                ("2026-03-08T03:30:00", "SCHEDULED", "2026-03-08T07:30:00Z", "2026-03-08T07:30:00Z"),
            ],
            {"2026-03-08T02:00:00": "2026-03-08T03:00:00", "2026-03-08T02:30:00": "2026-03-08T03:00:00"},
            id="half_hourly_shift_forward_two_losers",
        ),
        pytest.param(
            "America/New_York", "FREQ=MINUTELY;INTERVAL=30", "2026-03-08T00:00:00", "SHIFT_BY_GAP",
            ("2026-03-08T06:30:00Z", "2026-03-08T08:00:00Z"),
            [
                ("2026-03-08T01:30:00", "SCHEDULED", "2026-03-08T06:30:00Z", "2026-03-08T06:30:00Z"),
                ("2026-03-08T02:00:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:00:00Z"),
                ("2026-03-08T03:00:00", "SCHEDULED", "2026-03-08T07:00:00Z", "2026-03-08T07:00:00Z"),
                ("2026-03-08T02:30:00", "SKIPPED_DUPLICATE", None, "2026-03-08T07:30:00Z"),
                ("2026-03-08T03:30:00", "SCHEDULED", "2026-03-08T07:30:00Z", "2026-03-08T07:30:00Z"),
            ],
            {"2026-03-08T02:00:00": "2026-03-08T03:00:00", "2026-03-08T02:30:00": "2026-03-08T03:30:00"},
            id="half_hourly_shift_by_gap_two_pairs",
        ),
        pytest.param(
            # Neither 01:30 nor 02:30 exists; both shift to 03:00 +02 = 01:00Z and
            # neither reads back as its nominal, so the earlier nominal keeps it.
            "Antarctica/Troll", "FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30", "2026-03-28T00:00:00", "SHIFT_FORWARD",
            ("2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z"),
            [
                ("2026-03-29T01:30:00", "SHIFTED", "2026-03-29T01:00:00Z", "2026-03-29T01:00:00Z"),
                ("2026-03-29T02:30:00", "SKIPPED_DUPLICATE", None, "2026-03-29T01:00:00Z"),
            ],
            {"2026-03-29T02:30:00": "2026-03-29T01:30:00"},
            id="troll_2h_gap_earlier_nominal_wins",
        ),
        pytest.param(
            # Shifting 2011-12-30 12:00 by the 24-hour gap lands on 2011-12-31 12:00.
            "Pacific/Apia", "FREQ=DAILY;BYHOUR=12", "2011-12-28T00:00:00", "SHIFT_BY_GAP",
            ("2011-12-30T00:00:00Z", "2011-12-31T00:00:00Z"),
            [
                ("2011-12-30T12:00:00", "SKIPPED_DUPLICATE", None, "2011-12-30T22:00:00Z"),
                ("2011-12-31T12:00:00", "SCHEDULED", "2011-12-30T22:00:00Z", "2011-12-30T22:00:00Z"),
            ],
            {"2011-12-30T12:00:00": "2011-12-31T12:00:00"},
            id="apia_skipped_day_shift_by_gap",
        ),
    ],
)  # fmt: skip
def test_collisions_become_skipped_duplicate(
    zone: str,
    rule: str,
    start: str,
    gap: str,
    window: tuple[str, str],
    expected: list[tuple[object, ...]],
    duplicates: dict[str, str],
) -> None:
    spec = compiled(timeZone=zone, rule=rule, start=start, gapPolicy=gap)
    rows = rows_between(spec, *window)
    assert [(r.nominal_local, r.status.value, r.resolved_utc, r.to_json()["positionUtc"]) for r in rows] == expected
    by_nominal = {r.nominal_local: r for r in rows}
    for loser, winner in duplicates.items():
        lost, won = by_nominal[loser], by_nominal[winner]
        assert lost.logical_slot_id is None
        assert lost.reason is not None
        assert f"as {won.occurrence_id} (nominal {winner}), which keeps it" in lost.reason
        assert f"resolves to the same instant ({won.resolved_utc})" in lost.reason
    slots = [r.logical_slot_id for r in rows if r.logical_slot_id is not None]
    assert len(slots) == len(set(slots))


def test_excluded_row_does_not_win_a_collision() -> None:
    spec = compiled(rule="FREQ=HOURLY", start="2026-03-08T00:00:00", gapPolicy="SHIFT_FORWARD",
                    exclude=["2026-03-08T03:00:00"])  # fmt: skip
    rows = rows_between(spec, "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z")
    assert [(r.nominal_local, r.status.value, r.resolved_utc) for r in rows] == [
        ("2026-03-08T02:00:00", "SHIFTED", "2026-03-08T07:00:00Z"),
        ("2026-03-08T03:00:00", "EXCLUDED", None),
    ]


# --- business periods -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "window", "expected", "winner_of"),
    [
        pytest.param(
            # BOTH readings of 01:30 would run; one business period per wall time keeps one.
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "foldPolicy": "BOTH",
             "businessPeriod": "{nominal:%Y-%m-%dT%H:%M}"},
            ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
            [
                ("2026-11-01T01:30:00", 0, "SCHEDULED", "2026-11-01T01:30"),
                ("2026-11-01T01:30:00", 1, "SKIPPED_DUPLICATE", "2026-11-01T01:30"),
            ],
            {("2026-11-01T01:30:00", 1): ("2026-11-01T01:30:00", 0)},
            id="fold_both_one_run_per_period",
        ),
        pytest.param(
            # Two runs a day, one period a day: the first runnable row of the day keeps it.
            {"rule": "FREQ=DAILY;BYHOUR=9,17", "businessPeriod": "{nominal:%Y-%m-%d}"},
            ("2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z"),
            [
                ("2026-06-01T09:00:00", 0, "SCHEDULED", "2026-06-01"),
                ("2026-06-01T17:00:00", 0, "SKIPPED_DUPLICATE", "2026-06-01"),
                ("2026-06-02T09:00:00", 0, "SCHEDULED", "2026-06-02"),
                ("2026-06-02T17:00:00", 0, "SKIPPED_DUPLICATE", "2026-06-02"),
            ],
            {("2026-06-01T17:00:00", 0): ("2026-06-01T09:00:00", 0),
             ("2026-06-02T17:00:00", 0): ("2026-06-02T09:00:00", 0)},
            id="two_a_day_one_period_a_day",
        ),
        pytest.param(
            # Havana's midnight does not exist on 2025-03-09; a skipped row never
            # takes the period, so that day's noon run keeps it.
            {"timeZone": "America/Havana", "rule": "FREQ=DAILY;BYHOUR=0,12", "start": "2025-03-08T00:00:00",
             "businessPeriod": "{nominal:%Y-%m-%d}"},
            ("2025-03-08T00:00:00Z", "2025-03-10T04:00:00Z"),
            [
                ("2025-03-08T00:00:00", 0, "SCHEDULED", "2025-03-08"),
                ("2025-03-08T12:00:00", 0, "SKIPPED_DUPLICATE", "2025-03-08"),
                ("2025-03-09T00:00:00", 0, "SKIPPED_GAP", "2025-03-09"),
                ("2025-03-09T12:00:00", 0, "SCHEDULED", "2025-03-09"),
            ],
            {("2025-03-08T12:00:00", 0): ("2025-03-08T00:00:00", 0)},
            id="skipped_gap_row_does_not_take_the_period",
        ),
    ],
)  # fmt: skip
def test_business_period_duplicates(
    overrides: dict[str, str],
    window: tuple[str, str],
    expected: list[tuple[object, ...]],
    winner_of: dict[tuple[str, int], tuple[str, int]],
) -> None:
    base = {"start": "2026-01-01T00:00:00"} | overrides
    spec = compiled(**base)
    rows = rows_between(spec, *window)
    assert [(r.nominal_local, r.fold_ordinal, r.status.value, r.period) for r in rows] == expected
    by_key = {(r.nominal_local, r.fold_ordinal): r for r in rows}
    for loser, winner in winner_of.items():
        lost, won = by_key[loser], by_key[winner]
        assert lost.reason is not None
        assert f"falls in the same business period ({won.period}) as {won.occurrence_id}" in lost.reason
        assert lost.logical_slot_id is None
    # A later --from changes nothing about who keeps a period.
    later = rows_between(spec, rows[1].position, window[1])
    assert [(r.occurrence_id, r.status) for r in later] == [(r.occurrence_id, r.status) for r in rows[1:]]


# --- exclusions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "window", "expected"),
    [
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=9", "exclude": ["2026-12-25"]},
            ("2026-12-24T00:00:00Z", "2026-12-27T00:00:00Z"),
            [
                ("2026-12-24T09:00:00", 0, "SCHEDULED", "2026-12-24T14:00:00Z", "2026-12-24T14:00:00Z"),
                ("2026-12-25T09:00:00", 0, "EXCLUDED", None, "2026-12-25T14:00:00Z"),
                ("2026-12-26T09:00:00", 0, "SCHEDULED", "2026-12-26T14:00:00Z", "2026-12-26T14:00:00Z"),
            ],
            id="exclude_a_date",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=9,17", "exclude": ["2026-12-25T17:00:00"]},
            ("2026-12-25T00:00:00Z", "2026-12-26T00:00:00Z"),
            [
                ("2026-12-25T09:00:00", 0, "SCHEDULED", "2026-12-25T14:00:00Z", "2026-12-25T14:00:00Z"),
                ("2026-12-25T17:00:00", 0, "EXCLUDED", None, "2026-12-25T22:00:00Z"),
            ],
            id="exclude_one_date_time",
        ),
        pytest.param(
            {"exclude": ["2026-03-08T02:30:00"], "gapPolicy": "SHIFT_FORWARD"},
            ("2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z"),
            [("2026-03-08T02:30:00", 0, "EXCLUDED", None, "2026-03-08T07:00:00Z")],
            id="exclude_a_wall_time_in_a_gap",
        ),
        pytest.param(
            {"rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30", "exclude": ["2026-11-01"], "foldPolicy": "BOTH"},
            ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"),
            [
                ("2026-11-01T01:30:00", 0, "EXCLUDED", None, "2026-11-01T05:30:00Z"),
                ("2026-11-01T01:30:00", 1, "EXCLUDED", None, "2026-11-01T06:30:00Z"),
            ],
            id="exclude_both_readings_of_a_fold",
        ),
        pytest.param(
            {"rule": "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9", "exclude": ["2026-06-02", "2026-06-08T10:00:00"]},
            ("2026-06-01T00:00:00Z", "2026-06-09T00:00:00Z"),
            [
                ("2026-06-01T09:00:00", 0, "SCHEDULED", "2026-06-01T13:00:00Z", "2026-06-01T13:00:00Z"),
                ("2026-06-08T09:00:00", 0, "SCHEDULED", "2026-06-08T13:00:00Z", "2026-06-08T13:00:00Z"),
            ],
            id="exclude_entries_that_match_nothing_add_no_rows",
        ),
    ],
)  # fmt: skip
def test_exclude_makes_excluded_rows(
    overrides: dict[str, object], window: tuple[str, str], expected: list[tuple[object, ...]]
) -> None:
    rows = rows_between(compiled(**overrides), *window)
    got = [(r.nominal_local, r.fold_ordinal, r.status.value, r.resolved_utc, r.to_json()["positionUtc"]) for r in rows]
    assert got == expected
    for row in rows:
        if row.status is Status.EXCLUDED:
            assert row.logical_slot_id is None
            assert row.reason is not None
            assert row.reason.startswith(f"excluded: {row.nominal_local} is listed in exclude")


def test_excluded_gap_row_keeps_the_gap_reason() -> None:
    spec = compiled(exclude=["2026-03-08T02:30:00"], gapPolicy="SKIP")
    (row,) = rows_near(spec, "2026-03-08T02:30:00")
    assert row.status is Status.EXCLUDED
    assert row.reason == (
        "excluded: 2026-03-08T02:30:00 is listed in exclude (02:30 does not exist on 2026-03-08 in "
        "America/New_York: clocks jump from 02:00 EST to 03:00 EDT)"
    )


# --- interval schedules: elapsed time, no policies ------------------------------------------


@pytest.mark.parametrize(
    ("anchor", "count", "expected"),
    [
        pytest.param(
            "2026-11-01T04:30:00Z", 6,
            [
                ("2026-11-01T00:30:00", 0, "2026-11-01T04:30:00Z", "2026-11-01T00:30:00-04:00"),
                ("2026-11-01T01:00:00", 0, "2026-11-01T05:00:00Z", "2026-11-01T01:00:00-04:00"),
                ("2026-11-01T01:30:00", 0, "2026-11-01T05:30:00Z", "2026-11-01T01:30:00-04:00"),
                ("2026-11-01T01:00:00", 1, "2026-11-01T06:00:00Z", "2026-11-01T01:00:00-05:00"),
                ("2026-11-01T01:30:00", 1, "2026-11-01T06:30:00Z", "2026-11-01T01:30:00-05:00"),
                ("2026-11-01T02:00:00", 0, "2026-11-01T07:00:00Z", "2026-11-01T02:00:00-05:00"),
            ],
            id="interval_through_new_york_fold",
        ),
        pytest.param(
            "2026-03-08T06:00:00Z", 4,
            [
                ("2026-03-08T01:00:00", 0, "2026-03-08T06:00:00Z", "2026-03-08T01:00:00-05:00"),
                ("2026-03-08T01:30:00", 0, "2026-03-08T06:30:00Z", "2026-03-08T01:30:00-05:00"),
                ("2026-03-08T03:00:00", 0, "2026-03-08T07:00:00Z", "2026-03-08T03:00:00-04:00"),
                ("2026-03-08T03:30:00", 0, "2026-03-08T07:30:00Z", "2026-03-08T03:30:00-04:00"),
            ],
            id="interval_through_new_york_gap",
        ),
    ],
)  # fmt: skip
def test_interval_schedule_is_elapsed_time(anchor: str, count: int, expected: list[tuple[object, ...]]) -> None:
    spec = make_interval_spec(every="PT30M", anchor=anchor)
    rows = first_n(spec, anchor, count)
    assert [(r.nominal_local, r.fold_ordinal, r.resolved_utc, r.to_json()["resolvedLocal"]) for r in rows] == expected
    assert {r.status for r in rows} == {Status.SCHEDULED}
    assert len({r.occurrence_id for r in rows}) == count


# --- a UTC UNTIL bounds instants, not wall times ----------------------------------------------


@pytest.mark.parametrize(
    ("rule", "start", "gap", "expected"),
    [
        pytest.param(
            # 05:30Z is 01:30 EDT: the second reading of 01:00 (06:00Z) comes after it.
            "FREQ=HOURLY;UNTIL=20261101T053000Z", "2026-10-31T23:00:00", "SKIP",
            [("2026-10-31T23:00:00", 0, "2026-11-01T03:00:00Z"), ("2026-11-01T00:00:00", 0, "2026-11-01T04:00:00Z"),
             ("2026-11-01T01:00:00", 0, "2026-11-01T05:00:00Z")],
            id="fold_second_reading_after_until",
        ),
        pytest.param(
            "FREQ=HOURLY;UNTIL=20261101T060000Z", "2026-11-01T00:00:00", "SKIP",
            [("2026-11-01T00:00:00", 0, "2026-11-01T04:00:00Z"), ("2026-11-01T01:00:00", 0, "2026-11-01T05:00:00Z"),
             ("2026-11-01T01:00:00", 1, "2026-11-01T06:00:00Z")],
            id="fold_second_reading_at_until_inclusive",
        ),
        pytest.param(
            # 07:00Z is 03:00 EDT; 02:30 shifted by the gap lands at 07:30Z, after it.
            "FREQ=MINUTELY;INTERVAL=30;UNTIL=20260308T070000Z", "2026-03-08T01:00:00", "SHIFT_BY_GAP",
            [("2026-03-08T01:00:00", 0, "2026-03-08T06:00:00Z"), ("2026-03-08T01:30:00", 0, "2026-03-08T06:30:00Z"),
             ("2026-03-08T02:00:00", 0, None), ("2026-03-08T03:00:00", 0, "2026-03-08T07:00:00Z")],
            id="gap_shifted_past_until",
        ),
    ],
)  # fmt: skip
def test_utc_until_bounds_instants(rule: str, start: str, gap: str, expected: list[tuple[object, ...]]) -> None:
    spec = compiled(rule=rule, start=start, gapPolicy=gap, foldPolicy="BOTH")
    rows = rows_between(spec, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")
    assert [(r.nominal_local, r.fold_ordinal, r.resolved_utc) for r in rows] == expected


def test_dublin_data_really_has_negative_dst() -> None:
    # The premise of the dublin_negative_dst_* cases: in this data IST (summer) is
    # standard time and winter GMT is a -1 h "daylight saving" offset, yet its
    # March gap and October fold above resolve exactly like London's.
    dublin = get_zone("Europe/Dublin")
    winter = datetime(2026, 1, 15, 12, 0, tzinfo=dublin)
    summer = datetime(2026, 7, 15, 12, 0, tzinfo=dublin)
    assert (winter.tzname(), winter.utcoffset(), winter.dst()) == ("GMT", timedelta(0), timedelta(hours=-1))
    assert (summer.tzname(), summer.utcoffset(), summer.dst()) == ("IST", timedelta(hours=1), timedelta(0))
