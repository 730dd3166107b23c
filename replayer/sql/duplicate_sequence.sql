-- model: state
-- The (session, topic, seq) of records skipped as duplicates (a restarted recorder re-sends
-- what it had not checkpointed): their sequence numbers were delivered, not lost.
(session VARCHAR, topic VARCHAR, seq BIGINT)
