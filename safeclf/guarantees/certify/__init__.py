"""guarantees/certify."""
