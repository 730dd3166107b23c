-- model: state
-- Byte ranges of a source that could not be read — corrupt blocks, torn tails, missing,
-- empty or unreadable segments, undecodable Kafka records: [from_offset, to_offset) of the
-- topic's positions, bytes NULL where unknown (a missing segment). The damaged stretches
-- of unseen_stretches (unseen_stretches.sql) are derived from them, placed among the records of the
-- same source (recordings loaded together share topic names and positions).
(
    load_id INTEGER, source_id INTEGER, topic VARCHAR, "partition" INTEGER, from_offset BIGINT, to_offset BIGINT,
    bytes BIGINT, cause VARCHAR)
