"""replayer."""
