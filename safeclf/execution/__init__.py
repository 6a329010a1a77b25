"""execution."""
