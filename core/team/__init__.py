"""A team's concerns: who acts (actor), which engine runs a schedule (placement,
runs_on_match), secrets kept on an engine's host (secrets), credentials hidden
in what is shown (redact), and where alerts go (alert_routes).

The schedule layer (docs/architecture.md): may import core/spec/,
core/calendar/, core/recurrence/, core/time/ and the basics.
"""
