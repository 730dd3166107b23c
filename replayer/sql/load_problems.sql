-- model: state
-- Deliveries that were not loaded as they came: decode errors, malformed JSON, unknown
-- kinds, duplicates, out-of-order versions, records without identity.
(
    load_id INTEGER, topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    problem VARCHAR, detail VARCHAR)
