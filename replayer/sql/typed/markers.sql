-- markers: the recorder's own records (sessions, lists, relists, the stretches it did not see).
SELECT event_id, session, topic, resource, type, marker.cause, marker.detail,
       marker.from_rv, marker.to_rv, marker.from_time, marker.to_time, marker.object_count,
       marker.recorder_version, marker.kinds
FROM batch WHERE marker IS NOT NULL
