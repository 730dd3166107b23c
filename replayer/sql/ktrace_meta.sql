-- model: state
-- What the database says of itself: the application and schema version that claim it, the
-- digest of the SQL its projections were made with, how far they reach (projected_through).
(key VARCHAR PRIMARY KEY, value VARCHAR)
