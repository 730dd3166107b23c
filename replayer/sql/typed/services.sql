-- services: one row per Service version: its type and the pod labels its selector matches
-- (NULL: no selector, its endpoints are managed by hand).
SELECT p.event_id, p.uid, p.o.spec.type AS type,
       p.o.spec.selector::MAP(VARCHAR, VARCHAR) AS selector
FROM parsed p
WHERE p.kind = 'Service'
