-- model: state
-- One row per load: its source, when it ran, and what it delivered, loaded and skipped.
(
    load_id INTEGER PRIMARY KEY, source VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
    deliveries BIGINT, loaded BIGINT, duplicates BIGINT, problems BIGINT)
