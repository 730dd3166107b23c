"""``python -m bench``: recorder and replayer throughput, memory and query latency."""
