-- The pods whose pod_transitions/pod_lifecycle rows the records loaded since the last
-- refresh (`loaded`, a view of raw_events) may change: pods with a record in them; pods an
-- Event in them is about (by uid, or by name where it names no uid), or whose owner it is
-- about ("Deleted pod: NAME"); the targets of EndpointSlices in them; pods deleted on a Node at or after a Node record in them (the
-- node's state then); and every pod sharing a touched pod's name (a name reused by a new
-- uid ends the old one). Node and pod names are matched within their own cluster only.
WITH touched AS (
    SELECT uid FROM loaded WHERE kind = 'Pod' AND uid IS NOT NULL
    UNION
    SELECT e.regarding_uid FROM k8s_events e JOIN loaded b USING (event_id)
    WHERE e.regarding_uid IS NOT NULL
    UNION
    -- an Event naming a pod without its uid: the pods of that name
    SELECT r.uid FROM k8s_events e JOIN loaded b USING (event_id)
    JOIN raw_events r ON r.kind = 'Pod' AND r.cluster = b.cluster
     AND r.namespace IS NOT DISTINCT FROM e.regarding_namespace AND r.name = e.regarding_name
    WHERE e.regarding_kind = 'Pod' AND coalesce(e.regarding_uid, '') = '' AND r.uid IS NOT NULL
    UNION
    SELECT o.uid FROM owner_refs o
    WHERE o.owner_uid IN (SELECT e.regarding_uid FROM k8s_events e JOIN loaded b USING (event_id))
    UNION
    SELECT e.target_uid FROM endpoints e
    WHERE e.target_uid IS NOT NULL
      AND e.slice_uid IN (SELECT uid FROM loaded WHERE kind = 'EndpointSlice')
    UNION
    SELECT r.uid FROM raw_events r JOIN pods p USING (event_id)
    JOIN (SELECT cluster, name, min(received_at) AS since FROM loaded WHERE kind = 'Node'
          GROUP BY cluster, name) n
      ON r.cluster = n.cluster AND p.node_name = n.name AND r.received_at >= n.since
    WHERE r.type IN ('DELETED', 'INFERRED_DELETED'))
SELECT uid FROM touched
UNION
SELECT r.uid FROM raw_events r
JOIN (SELECT DISTINCT cluster, namespace, name FROM raw_events
      WHERE kind = 'Pod' AND uid IN (SELECT uid FROM touched)) t
  ON r.cluster = t.cluster AND r.namespace IS NOT DISTINCT FROM t.namespace AND r.name = t.name
WHERE r.kind = 'Pod' AND r.uid IS NOT NULL
