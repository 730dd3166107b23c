"""ktrace test suite."""
