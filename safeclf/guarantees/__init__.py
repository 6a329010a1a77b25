"""guarantees."""
