-- model: macro(reason, exit_code)
-- Whether a terminated container status is the end of a run (not a start that failed, nor
-- the kubelet's stand-in for a container it could not find).
coalesce(reason, '') NOT IN ('ContainerCannotRun', 'StartError', 'RunContainerError',
                                 'CreateContainerError', 'ContainerStatusUnknown')
    AND coalesce(exit_code, 0) NOT IN (127, 128)
