-- model: macro(source, received); depends: window_starts
-- Whether a record of ``source`` received at ``received`` was loaded as the state at a
-- window's start (window_starts), not as a record the window's recorder delivered.
-- (Before the source's latest window start: one lookup per source, where an EXISTS per
-- record cost ~0.1 CPU-s per million records on every refresh.)
coalesce(received < (SELECT max(w.since) FROM window_starts w WHERE w.source_id = source), false)
