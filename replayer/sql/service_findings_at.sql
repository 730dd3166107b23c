-- model: macro(ts, threshold_s := 60); depends: conditions, endpoints, raw_events, readiness_failures_at, services, state_at
-- service_findings_at(ts, threshold_s := 60): Services whose selector matches no Ready pod
-- at ts, in object_findings_at's shape: state and cause `no_ready_endpoints` — the API
-- server's "no endpoints available for service" (pkg/registry/core/service/storage), the
-- "has no endpoints" of kube-proxy's reject rule: every connection to it is refused. The
-- evidence is the Service's EndpointSlices at ts (none of their endpoints ready; ready unset
-- counts as ready, as discovery/v1 says) and the pods its selector matches: none (the
-- selector's keys' values on the namespace's pods named, a typo shows), or each not Ready
-- with its Ready condition and its kubelet's latest readiness probe failure
-- (readiness_failures_at). Judged only
-- where the cluster's recording holds EndpointSlices and the Service has one at ts (the
-- EndpointSlice controller writes one, empty, for a selector matching nothing); a Service
-- without a selector (endpoints managed by hand) or of type ExternalName is not judged.
-- `since`: the first slice version after the last one with a ready endpoint, else the
-- Service's creation; stuck once that lasted threshold_s.
WITH svc AS MATERIALIZED (
    SELECT l.cluster, l.namespace, l.name, l.uid, l.event_id, l.created_at, l.received_at,
           s.selector
    FROM state_at(ts) l JOIN services s USING (event_id)
    WHERE l.kind = 'Service' AND cardinality(s.selector) > 0
      AND coalesce(s.type, 'ClusterIP') <> 'ExternalName'),
-- every EndpointSlice version received by ts of the Services judged, with its ready count
slice_versions AS MATERIALIZED (
    SELECT r.cluster, r.namespace, r.labels['kubernetes.io/service-name'] AS service, r.uid,
           r.name, r.event_id, r.received_at,
           count(e.slice_uid) AS endpoints,
           count(e.slice_uid) FILTER (WHERE coalesce(e.ready, true)) AS ready
    FROM raw_events r LEFT JOIN endpoints e USING (event_id)
    WHERE r.kind = 'EndpointSlice' AND r.received_at <= ts
      AND (r.cluster, r.namespace, r.labels['kubernetes.io/service-name'])
          IN (SELECT (cluster, namespace, name) FROM svc)
    GROUP BY ALL),
slices AS (
    SELECT s.uid AS service_uid, list(v.event_id ORDER BY v.name) AS ids,
           string_agg('EndpointSlice ' || v.name || ': ' || CASE v.endpoints WHEN 0
               THEN 'no endpoint' WHEN 1 THEN '1 endpoint, not ready'
               ELSE v.endpoints || ' endpoints, ' || v.ready || ' ready' END,
               '; ' ORDER BY v.name) AS line,
           sum(v.ready) AS ready
    FROM svc s JOIN state_at(ts) l ON l.kind = 'EndpointSlice' AND l.cluster = s.cluster
         AND l.namespace = s.namespace AND l.labels['kubernetes.io/service-name'] = s.name
    JOIN slice_versions v ON v.event_id = l.event_id
    GROUP BY s.uid),
-- the start of the stretch without a ready endpoint: the slice version after the last one
-- that had one
last_ready AS (
    SELECT s.uid AS service_uid, max(v.received_at) AS at
    FROM svc s JOIN slice_versions v ON v.cluster = s.cluster AND v.namespace = s.namespace
         AND v.service = s.name
    WHERE v.ready > 0 GROUP BY s.uid),
emptied AS (
    SELECT s.uid AS service_uid, min(v.received_at) AS at
    FROM svc s JOIN last_ready r ON r.service_uid = s.uid
    JOIN slice_versions v ON v.cluster = s.cluster AND v.namespace = s.namespace
         AND v.service = s.name AND v.received_at > r.at
    GROUP BY s.uid),
namespace_pods AS MATERIALIZED (
    SELECT p.cluster, p.namespace, p.name, p.uid, p.event_id, p.labels
    FROM state_at(ts) p
    WHERE p.kind = 'Pod' AND (p.cluster, p.namespace) IN (SELECT (cluster, namespace) FROM svc)),
matched AS (
    SELECT s.uid AS service_uid, p.name, p.uid, p.event_id,
           c.status = 'True' AS ready,
           coalesce(c.reason || coalesce(': ' || c.message, ''), 'no Ready condition') AS why
    FROM svc s JOIN namespace_pods p ON p.cluster = s.cluster AND p.namespace = s.namespace
         AND len(list_filter(map_entries(s.selector),
                             lambda e: p.labels[e.key] IS DISTINCT FROM e.value)) = 0
    LEFT JOIN conditions c ON c.event_id = p.event_id AND c.type = 'Ready'),
pods_line AS (
    SELECT m.service_uid, count(*) AS n,
           string_agg('pod ' || m.name || ' not Ready (' || m.why
                      || coalesce('; ' || f.line, '') || ')', '; ' ORDER BY m.name)
               FILTER (WHERE NOT coalesce(m.ready, false)) AS line,
           list(m.event_id ORDER BY m.name) || coalesce(list(f.event_id ORDER BY m.name)
               FILTER (WHERE f.event_id IS NOT NULL AND NOT coalesce(m.ready, false)), []) AS ids
    FROM matched m LEFT JOIN readiness_failures_at(ts) f USING (uid)
    GROUP BY m.service_uid),
-- for a selector matching nothing: the values its keys have on the namespace's pods
near AS (
    SELECT s.uid AS service_uid,
           string_agg(k.key || ': ' || k.vals, ', ' ORDER BY k.key) AS line
    FROM svc s, LATERAL (
        SELECT sk.key, string_agg(DISTINCT p.labels[sk.key], ', ' ORDER BY p.labels[sk.key]) AS vals
        FROM (SELECT unnest(map_keys(s.selector)) AS key) sk
        JOIN namespace_pods p ON p.cluster = s.cluster AND p.namespace = s.namespace
             AND p.labels[sk.key] IS NOT NULL
        GROUP BY sk.key) k
    GROUP BY s.uid)
SELECT s.kind, s.namespace, s.name, s.uid, 'no_ready_endpoints' AS state,
       'no_ready_endpoints' AS cause, coalesce(e.at, s.created_at, s.received_at) AS since,
       'selector ' || array_to_string(list_sort([e.key || '=' || e.value
                                                  FOR e IN map_entries(s.selector)]), ',')
           || CASE WHEN p.n IS NULL
                   THEN ' matches no pod in namespace ' || s.namespace
                        || coalesce(' (its pods have ' || n.line || ')', ' (no pod has its labels'' keys)')
                   ELSE ' matches ' || p.n || ' pod' || CASE WHEN p.n > 1 THEN 's' ELSE '' END
                        || coalesce(', none Ready: ' || p.line, ', Ready but not yet in its endpoints') END
           || ' — ' || sl.line AS detail,
       [s.event_id] || sl.ids || coalesce(p.ids, []) AS evidence, s.event_id,
       coalesce(e.at, s.created_at, s.received_at) <= ts - to_seconds(threshold_s) AS stuck
FROM (SELECT *, 'Service' AS kind FROM svc) s
JOIN slices sl ON sl.service_uid = s.uid
LEFT JOIN last_ready r ON r.service_uid = s.uid
LEFT JOIN emptied e ON e.service_uid = s.uid
LEFT JOIN pods_line p ON p.service_uid = s.uid
LEFT JOIN near n ON n.service_uid = s.uid
WHERE sl.ready = 0
  -- not ready since: with a ready endpoint in the past, the version that removed it
  AND (r.at IS NULL OR e.at IS NOT NULL)
