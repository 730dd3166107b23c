-- model: macro(); depends: raw_events
-- The end of the data: the default "now" of stuck_at and friends.
(SELECT max(received_at) FROM raw_events)
