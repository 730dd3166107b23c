"""recorder."""
