"""Business days: a schedule's closed and open days (business_days) and their words
(business_words), public holidays by code (holiday_codes) and their search
(holiday_search).

The schedule layer (docs/architecture.md): may import core/spec/,
core/recurrence/, core/team/, core/time/ and the basics.
"""
