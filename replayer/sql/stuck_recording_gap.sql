-- model: macro(stuck, ts); depends: cause_score, gap_hides, gap_label, unseen_stretches
-- recording_gap: while an unseen stretch of the object's topic is open at ts, the DELETED
-- may simply not have been seen (after it, the relist re-established the state); damage
-- after the object's last record read ranks first (the variant score): no relist followed
-- it, so the object's fate is unknown.
SELECT s.uid, 'recording_gap' AS cause,
       max(cause_score('recording_gap', g.type = 'damaged' AND g.end_at > s.received_at))
           AS score,
       string_agg(gap_label(g.type, g.start_at, g.end_at), '; ' ORDER BY g.start_at, g.type)
           AS detail,
       list(g.evidence_event_id ORDER BY g.start_at, g.type) AS evidence
FROM query_table(stuck) s JOIN unseen_stretches g ON gap_hides(g, s, ts)
GROUP BY s.uid
