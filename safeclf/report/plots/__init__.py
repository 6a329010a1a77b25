"""report/plots."""
