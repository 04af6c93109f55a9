"""calendar."""
