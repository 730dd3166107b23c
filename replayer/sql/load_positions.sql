-- model: state
-- Where each source's (topic, partition) was loaded up to; written in the same transaction
-- as the rows, so several recordings (clusters, shards) load into one database.
(
    source_id INTEGER, topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    PRIMARY KEY (source_id, topic, "partition"))
