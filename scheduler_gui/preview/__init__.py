"""The preview table, the timeline and the what-if view."""
