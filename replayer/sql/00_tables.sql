-- The bookkeeping tables. The loaded facts (raw_events and the typed tables, each keyed by
-- the event_id of the raw_events row it came from) are declared in sql/typed/. Times are
-- TIMESTAMP in UTC (microseconds).

CREATE TABLE IF NOT EXISTS ktrace_meta (key VARCHAR PRIMARY KEY, value VARCHAR);

-- The recordings loaded into this database, one row per source: `locator` says where it is
-- (local:<directory>, kafka:<bootstrap>, import), so an object not stored in raw_events is
-- fetched from it by the record's (topic, partition, offset); `load_filter` and
-- `store_objects` are what it was first loaded with (a resumed load must use the same).
CREATE TABLE IF NOT EXISTS sources (
    source_id INTEGER PRIMARY KEY, locator VARCHAR UNIQUE, load_filter VARCHAR,
    store_objects BOOLEAN);

-- Where each source's (topic, partition) was loaded up to; written in the same transaction
-- as the rows, so several recordings (clusters, shards) load into one database.
CREATE TABLE IF NOT EXISTS load_positions (
    source_id INTEGER, topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    PRIMARY KEY (source_id, topic, "partition"));

CREATE TABLE IF NOT EXISTS loads (
    load_id INTEGER PRIMARY KEY, source VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
    deliveries BIGINT, loaded BIGINT, duplicates BIGINT, problems BIGINT);

-- Deliveries that were not loaded as they came: decode errors, malformed JSON, unknown
-- kinds, duplicates, out-of-order versions, records without identity.
CREATE TABLE IF NOT EXISTS load_problems (
    load_id INTEGER, topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    problem VARCHAR, detail VARCHAR);

-- The (session, topic, seq) of records skipped as duplicates (a restarted recorder re-sends
-- what it had not checkpointed): their sequence numbers were delivered, not lost.
CREATE TABLE IF NOT EXISTS duplicate_sequence (session VARCHAR, topic VARCHAR, seq BIGINT);

-- Projections kept as tables (analyses read them; a load refreshes them in its last
-- transaction, replayer/projections.py), in refresh order; each is computed by the view
-- <name>_computed for the uids in projection_scope only, its rows keyed by key_column.
CREATE TABLE IF NOT EXISTS materialized (name VARCHAR PRIMARY KEY, refresh_order INTEGER,
                                         key_column VARCHAR);

-- The objects whose projections are to be recomputed: every object a loaded batch holds a
-- version of, and the pods it touched (sql/typed/_touched_pods.sql), added in the batch's
-- transaction and cleared by the refresh, so an interrupted load's are recomputed by the next.
CREATE TABLE IF NOT EXISTS projection_scope (uid VARCHAR PRIMARY KEY);

-- Byte ranges of a source that could not be read — corrupt blocks, torn tails, missing,
-- empty or unreadable segments, undecodable Kafka records: [from_offset, to_offset) of the
-- topic's positions, bytes NULL where unknown (a missing segment). The damaged stretches
-- of unseen_stretches (50_gaps.sql) are derived from them, placed among the records of the
-- same source (recordings loaded together share topic names and positions).
CREATE TABLE IF NOT EXISTS unreadable_ranges (
    load_id INTEGER, source_id INTEGER, topic VARCHAR, "partition" INTEGER, from_offset BIGINT, to_offset BIGINT,
    bytes BIGINT, cause VARCHAR);
