"""Spec texts the core and the window tests share."""

#: A schedule as a person keeps it: a header, comments beside keys, between keys and in the task.
COMMENTED = """\
# Operating summary: the 02:30 report.
# New York skips 02:00-03:00 in March and repeats 01:00-02:00 in November.
schema: scheduleSpec.v1
scheduleId: daily-ops-summary   # the id the ledger knows
revision: 1
title: "Operating summary"      # shown in lists

# Where and when
timeZone: America/New_York
kind: calendar
rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30   # 02:30 every day
start: 2026-01-01T00:00:00     # local wall time
exclude: ['2026-12-25', 2026-07-04]
gapPolicy: SKIP                 # no run at 02:30 on the spring day
foldPolicy: FIRST_ONLY
# Catch up once after an outage
misfirePolicy: CATCH_UP_BOUNDED
# how many missed runs to make up
maxCatchUp: 1
retry: {maxAttempts: 3, initialBackoff: PT30S}
businessPeriod: "{nominal:%Y-%m-%d}"
task:
  # the command, never through a shell
  argv: ["/bin/echo", "operating summary for {period}"]
  env: {}
  timeout: PT1M   # it is quick
  effect: idempotent
# end of file
"""
