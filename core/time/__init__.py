"""Time: IANA zones (zones), what is known of them (zone_info) and their search by
name, city or abbreviation (zone_search), the tz database's pin-or-follow policy
(tzdb_policy) and the check of TZif files (tzif_check), durations (durations)
and the times shown to people (formats).

May import the basics (core's root modules) only.
"""
