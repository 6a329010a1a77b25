"""Plot kinds the ramp method adds (filled in below)."""
PLOTS = {}
