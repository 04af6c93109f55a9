"""The schedule document (scheduleSpec.v1): its model (model), the checks beyond the
model (validation, bounds), its canonical form and key order (canonical, order),
a person's YAML kept through a round trip with its comments (roundtrip,
yaml_comments, yaml_io, yaml_text), reading spec files safely (files), and the
workspace's own settings file (workspace_settings).

The schedule layer (docs/architecture.md), with core/calendar/, core/recurrence/
and core/team/, which it may import: validation compiles the rule, the model
checks holiday codes, alert routes and secret names. Below them: core/time/ and
the basics.
"""
