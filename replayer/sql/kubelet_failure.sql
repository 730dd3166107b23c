-- model: macro(reason, message)
-- The cause a kubelet Failed/BackOff Event names, from its message (the container's own
-- waiting reason says the same while it is in the status; the Event outlives it):
--   "Failed to pull image …", "Error: ErrImagePull", "Back-off pulling image …", and
--     InspectFailed's "Failed to apply default image tag …" (an invalid name) and "Failed to
--     inspect image …" → image_pull;
--   "Error: configmap "x" not found", "Error: couldn't find key K in Secret …" → container_config;
--   "Back-off restarting failed container …" → crash_loop;
--   "Error: failed to start container …", "… executable file not found …" → run_container_error;
--   FailedPostStartHook (the hook failed and the kubelet killed the container) → run_container_error.
CASE
    WHEN reason = 'FailedPostStartHook' THEN 'run_container_error'
    WHEN reason NOT IN ('Failed', 'BackOff', 'InspectFailed', 'ErrImageNeverPull') THEN NULL
    WHEN message ILIKE '%pull%image%' OR message ILIKE 'Error: ErrImagePull%'
         OR message ILIKE 'Error: ImagePullBackOff%' OR message ILIKE '%InvalidImageName%'
         OR message ILIKE '%ErrImageNeverPull%' OR message ILIKE '%image%not present%'
         OR message ILIKE 'Failed to apply default image tag%'
         OR message ILIKE 'Failed to inspect image%'
        THEN 'image_pull'
    WHEN message ILIKE 'Back-off restarting failed container%' THEN 'crash_loop'
    WHEN message ILIKE 'Error: %not found%' OR message ILIKE 'Error: couldn''t find key%'
         OR message ILIKE 'Error: %secret%' OR message ILIKE 'Error: %configmap%'
        THEN 'container_config'
    WHEN message ILIKE 'Error: failed to start container%' OR message ILIKE '%executable file not found%'
         OR message ILIKE 'Error: failed to create containerd task%'
         OR message ILIKE 'Error: container create failed%' OR message ILIKE '%StartError%'
        THEN 'run_container_error' END
