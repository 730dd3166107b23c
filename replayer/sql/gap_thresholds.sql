-- model: seed
-- How long each pod_lifecycle duration may take before gaps calls it slow, and the steps
-- it runs between (`ktrace gaps --threshold` overrides one for a query: thresholds_with).
(
    name VARCHAR PRIMARY KEY, seconds DOUBLE, meaning VARCHAR, from_step VARCHAR,
    to_step VARCHAR)
VALUES
    ('create_to_schedule_s', 5, 'pod waited for the scheduler', 'created', 'scheduled'),
    ('schedule_to_run_s', 30, 'kubelet took long to start the containers (image pulls, volumes)',
     'scheduled', 'running'),
    ('run_to_api_s', 5, 'status reached the API server late', 'running', 'running'),
    ('run_to_watch_s', 5, 'status reached the API server or the recorder late', 'running',
     'running'),
    ('ready_to_endpoints_s', 5, 'endpointslice controller added the ready pod late', 'ready',
     'in_endpoints'),
    ('request_to_endpoint_not_ready_s', 5, 'endpoint kept receiving traffic after deletion',
     'deletion_requested', 'endpoint_not_ready'),
    ('stopped_to_deleted_s', 10, 'pod object lingered after its containers stopped',
     'containers_stopped', 'deleted'),
    ('request_to_deleted_s', 60, 'deletion took long overall', 'deletion_requested', 'deleted')
