-- model: macro(msg); depends: eviction_by_limit, pressure_resource
-- The resource a kubelet eviction message names (see pressure_resource).
CASE
    WHEN eviction_by_limit(msg) THEN 'ephemeral-storage'
    ELSE coalesce(
        pressure_resource(regexp_extract(msg, '(?:low on resource|had condition): \[(\w+)\]', 1)),
        nullif(regexp_extract(msg, 'low on resource: ([a-z.-]+[a-z])', 1), '')) END
