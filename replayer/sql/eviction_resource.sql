-- model: macro(msg); depends: pressure_resource
-- The resource a kubelet eviction message names (see pressure_resource).
CASE
    WHEN msg ILIKE '%exceeded its local ephemeral storage limit%'
         OR msg ILIKE '%ephemeral local storage usage exceeds%'
         OR msg ILIKE 'Usage of EmptyDir volume%' THEN 'ephemeral-storage'
    ELSE coalesce(
        pressure_resource(regexp_extract(msg, '(?:low on resource|had condition): \[(\w+)\]', 1)),
        nullif(regexp_extract(msg, 'low on resource: ([a-z.-]+[a-z])', 1), '')) END
