-- k8s_events: Kubernetes Events, core/v1 (involvedObject, source, first/lastTimestamp) and
-- events.k8s.io/v1 (regarding, note, reportingController, series) in one shape.
WITH e AS (
    SELECT p.event_id, p.uid, p.o,
           coalesce(p.o.regarding, p.o.involvedObject) AS regarding,
           coalesce(p.o.eventTime, p.o.deprecatedFirstTimestamp, p.o.firstTimestamp) AS first_time
    FROM parsed p WHERE p.kind = 'Event')
SELECT event_id, uid, o.reason, clean_message(coalesce(o.note, o.message)) AS message, o.type, o.action,
       coalesce(nullif(o.reportingController, ''), o.source.component,
                o.deprecatedSource.component) AS component,
       coalesce(nullif(o.reportingInstance, ''), o.source.host, o.deprecatedSource.host)
           AS reporting_instance,
       regarding.kind AS regarding_kind, regarding.namespace AS regarding_namespace,
       regarding.name AS regarding_name, regarding.uid AS regarding_uid,
       regarding.fieldPath AS regarding_field_path,
       coalesce(nullif(o.series.count, 0), nullif(o.deprecatedCount, 0), nullif(o.count, 0), 1)
           AS count,
       first_time,
       coalesce(o.series.lastObservedTime, o.deprecatedLastTimestamp, o.lastTimestamp,
                first_time) AS last_time
FROM e
