-- model: macro(source, received); depends: window_starts
-- Whether a record of ``source`` received at ``received`` was loaded as the state at a
-- window's start (window_starts), not as a record the window's recorder delivered.
EXISTS (SELECT 1 FROM window_starts w WHERE w.source_id = source AND received < w.since)
