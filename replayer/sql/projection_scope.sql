-- model: state
-- The objects whose projections are to be recomputed: every object a loaded batch holds a
-- version of, and the pods it touched (sql/typed/_touched_pods.sql), added in the batch's
-- transaction and cleared by the refresh, so an interrupted load's are recomputed by the next.
(uid VARCHAR PRIMARY KEY)
