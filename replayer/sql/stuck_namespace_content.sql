-- model: macro(stuck, ts); depends: cause_score, conditions, raw_events, state_at
-- namespace_content: a namespace's deletion conditions, and what still lives in it — what
-- the namespace controller says remains ("configmaps. has 1 resource instances"), and
-- which of those kinds ktrace did not record (so it cannot show them); sub-reason
-- `discovery` when API discovery failed (an aggregated API that does not answer),
-- `group_version` when discovery lists a groupVersion that does not parse.
-- (the stuck namespaces' conditions first, and the recorded resources only when one is
-- stuck — joined to a relation empty without one: a join of conditions to an empty list,
-- or a count compared in WHERE, still read every condition and record of the recording)
WITH stuck AS MATERIALIZED (FROM query_table(stuck) WHERE kind = 'Namespace'),
any_stuck AS (SELECT DISTINCT true AS found FROM stuck),
-- (the namespace condition types by their prefix, which the scan applies: by event_id
-- alone every condition of the recording went on to a join, 938,848 at the bench's 1M end)
ns_conditions AS MATERIALIZED (
    SELECT c.event_id, c.type, c.message FROM conditions c
    WHERE c.event_id IN (SELECT event_id FROM stuck) AND c.status = 'True'
      AND starts_with(c.type, 'Namespace')),
recorded_resources AS (
    SELECT DISTINCT r.resource FROM any_stuck CROSS JOIN raw_events r),
ns_remaining AS (
    SELECT s.uid, list_distinct(flatten(list(regexp_extract_all(c.message,
               '([a-z0-9.-]+?)\. has \d+ resource instances', 1)))) AS resources
    FROM stuck s JOIN ns_conditions c ON c.event_id = s.event_id
         AND c.type = 'NamespaceContentRemaining'
    GROUP BY s.uid)
SELECT s.uid, 'namespace_content' AS cause, cause_score('namespace_content', false) AS score,
       -- a groupVersion that does not parse stops every deletion (the controller deletes
       -- nothing); an aggregated API that does not answer blocks it: not the objects
       CASE WHEN bool_or(c.type = 'NamespaceDeletionGroupVersionParsingFailure') THEN 'group_version — '
            WHEN bool_or(c.type = 'NamespaceDeletionDiscoveryFailure') THEN 'discovery — '
            ELSE '' END ||
       concat_ws('; ', string_agg(c.type || ': ' || c.message, '; ' ORDER BY c.type),
                 (SELECT count(*) || ' recorded objects remain' FROM state_at(ts) o
                  WHERE o.cluster = s.cluster AND o.namespace = s.name
                    AND o.kind <> 'Event'
                  HAVING count(*) > 0),
                 (SELECT 'not recorded by ktrace: '
                         || string_agg(x, ', ' ORDER BY x)
                  FROM (SELECT unnest(any_value(n.resources)) AS x)
                  WHERE split_part(x, '.', 1) NOT IN (SELECT resource FROM recorded_resources)
                  HAVING count(*) > 0)) AS detail,
       [s.event_id] AS evidence
FROM stuck s LEFT JOIN ns_conditions c ON c.event_id = s.event_id
     AND c.type IN ('NamespaceDeletionContentFailure', 'NamespaceFinalizersRemaining',
                    'NamespaceContentRemaining', 'NamespaceDeletionDiscoveryFailure',
                    'NamespaceDeletionGroupVersionParsingFailure')
LEFT JOIN ns_remaining n ON n.uid = s.uid
GROUP BY s.uid, s.cluster, s.name, s.event_id
