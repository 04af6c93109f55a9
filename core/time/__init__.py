"""time."""
