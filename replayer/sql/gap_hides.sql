-- model: macro(gap, obj, ts)
-- Whether unseen stretch `gap` hides what happened to object version `obj` (its cluster,
-- namespace and topic, last read at its received_at), judged at `ts`: the stretch is of
-- the object's cluster, namespace scope and topic (or of all of them), and it covers ts,
-- or it is damage after the object's last record (nothing re-lists after damage). Used by
-- the stuck and not-running analyses' recording_gap cause, with gap_label for its detail.
(gap.cluster IS NULL OR gap.cluster = obj.cluster)
    AND (gap.namespace IS NULL OR gap.namespace = obj.namespace)
    AND (gap.topic IS NULL OR gap.topic = obj.topic) AND gap.start_at <= ts
    AND (gap.end_at > ts OR (gap.type = 'damaged' AND gap.end_at > obj.received_at))
