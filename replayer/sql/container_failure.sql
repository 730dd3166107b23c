-- model: macro(state, reason, exit_code, last_reason, last_exit_code, restart_count)
-- container_failure(…): the cause one container status shows (app and init containers
-- alike; NULL: none). A last run that could not start (StartError, exit 127/128) is
-- run_container_error even in CrashLoopBackOff: it never ran, so it has no logs.
CASE
    WHEN reason IN ('ErrImagePull', 'ImagePullBackOff', 'InvalidImageName',
                    'ErrImageNeverPull', 'RegistryUnavailable', 'ImageInspectError',
                    'SignatureValidationFailed') THEN 'image_pull'
    WHEN reason = 'CreateContainerConfigError' THEN 'container_config'
    WHEN reason IN ('RunContainerError', 'CreateContainerError', 'StartError',
                    'ContainerCannotRun', 'PreCreateHookError', 'PostStartHookError',
                    'PreStartHookError')
         OR last_reason IN ('StartError', 'ContainerCannotRun')
         OR last_exit_code IN (127, 128) THEN 'run_container_error'
    WHEN last_reason = 'OOMKilled' OR (state = 'terminated' AND reason = 'OOMKilled')
        THEN 'oom_killed'
    WHEN reason = 'CrashLoopBackOff' THEN 'crash_loop'
    WHEN restart_count > 0 AND last_exit_code IS DISTINCT FROM 0 THEN 'crash_loop' END
