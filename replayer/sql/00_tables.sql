-- The loaded facts. Every table but the bookkeeping ones is keyed by event_id, the load
-- order of the raw_events row it came from. Times are TIMESTAMP in UTC (microseconds).

CREATE TABLE IF NOT EXISTS ktrace_meta (key VARCHAR PRIMARY KEY, value VARCHAR);

-- Where each (topic, partition) was loaded up to; written in the same transaction as rows.
CREATE TABLE IF NOT EXISTS load_positions (
    topic VARCHAR, "partition" INTEGER, "offset" BIGINT, PRIMARY KEY (topic, "partition"));

CREATE TABLE IF NOT EXISTS loads (
    load_id INTEGER PRIMARY KEY, source VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
    deliveries BIGINT, loaded BIGINT, duplicates BIGINT, problems BIGINT);

-- Deliveries that were not loaded as they came: decode errors, malformed JSON, unknown
-- kinds, duplicates, out-of-order versions, records without identity.
CREATE TABLE IF NOT EXISTS load_problems (
    load_id INTEGER, topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    problem VARCHAR, detail VARCHAR);

CREATE TABLE IF NOT EXISTS raw_events (
    event_id BIGINT,
    topic VARCHAR, "partition" INTEGER, "offset" BIGINT,
    cluster VARCHAR, session VARCHAR, seq BIGINT, type VARCHAR, inferred BOOLEAN,
    api_version VARCHAR, kind VARCHAR, resource VARCHAR,
    namespace VARCHAR, name VARCHAR, uid VARCHAR,
    resource_version VARCHAR, rv BIGINT,
    received_at TIMESTAMP, time_source VARCHAR,
    component VARCHAR, attribution VARCHAR,
    object JSON, object_size BIGINT, truncated BOOLEAN,
    created_at TIMESTAMP, deletion_at TIMESTAMP, deletion_grace_s BIGINT, generation BIGINT,
    finalizers VARCHAR[], labels MAP(VARCHAR, VARCHAR));

CREATE TABLE IF NOT EXISTS owner_refs (
    event_id BIGINT, uid VARCHAR, owner_kind VARCHAR, owner_name VARCHAR, owner_uid VARCHAR,
    controller BOOLEAN, block_owner_deletion BOOLEAN);

CREATE TABLE IF NOT EXISTS pods (
    event_id BIGINT, uid VARCHAR, phase VARCHAR, node_name VARCHAR, pod_ip VARCHAR,
    start_time TIMESTAMP, grace_s BIGINT, has_prestop BOOLEAN, claim_names VARCHAR[]);

CREATE TABLE IF NOT EXISTS containers (
    event_id BIGINT, uid VARCHAR, name VARCHAR, init BOOLEAN, ready BOOLEAN,
    restart_count INTEGER, state VARCHAR, reason VARCHAR, exit_code INTEGER,
    started_at TIMESTAMP, finished_at TIMESTAMP);

-- Status conditions of pods, nodes, workloads and namespaces.
CREATE TABLE IF NOT EXISTS conditions (
    event_id BIGINT, uid VARCHAR, kind VARCHAR, type VARCHAR, status VARCHAR, reason VARCHAR,
    message VARCHAR, last_transition TIMESTAMP, last_heartbeat TIMESTAMP);

CREATE TABLE IF NOT EXISTS endpoints (
    event_id BIGINT, slice_uid VARCHAR, service VARCHAR, address_type VARCHAR,
    addresses VARCHAR[], ready BOOLEAN, serving BOOLEAN, terminating BOOLEAN,
    node_name VARCHAR, target_kind VARCHAR, target_name VARCHAR, target_uid VARCHAR);

CREATE TABLE IF NOT EXISTS k8s_events (
    event_id BIGINT, uid VARCHAR, reason VARCHAR, message VARCHAR, type VARCHAR,
    action VARCHAR, component VARCHAR, reporting_instance VARCHAR,
    regarding_kind VARCHAR, regarding_namespace VARCHAR, regarding_name VARCHAR,
    regarding_uid VARCHAR, regarding_field_path VARCHAR, count INTEGER,
    first_time TIMESTAMP, last_time TIMESTAMP);

CREATE TABLE IF NOT EXISTS nodes (
    event_id BIGINT, uid VARCHAR, name VARCHAR, ready VARCHAR, unschedulable BOOLEAN);

CREATE TABLE IF NOT EXISTS taints (
    event_id BIGINT, uid VARCHAR, key VARCHAR, value VARCHAR, effect VARCHAR,
    time_added TIMESTAMP);

CREATE TABLE IF NOT EXISTS leases (
    event_id BIGINT, uid VARCHAR, namespace VARCHAR, name VARCHAR, holder VARCHAR,
    duration_s INTEGER, renew_time TIMESTAMP);

CREATE TABLE IF NOT EXISTS workloads (
    event_id BIGINT, uid VARCHAR, kind VARCHAR, replicas INTEGER, status_replicas INTEGER,
    updated_replicas INTEGER, ready_replicas INTEGER, available_replicas INTEGER,
    unavailable_replicas INTEGER, observed_generation BIGINT, revision VARCHAR,
    pod_template_hash VARCHAR, strategy VARCHAR, max_surge VARCHAR, max_unavailable VARCHAR);

CREATE TABLE IF NOT EXISTS volumes (
    event_id BIGINT, uid VARCHAR, kind VARCHAR, phase VARCHAR, volume_name VARCHAR,
    storage_class VARCHAR, claim_namespace VARCHAR, claim_name VARCHAR, attacher VARCHAR,
    node_name VARCHAR, pv_name VARCHAR, attached BOOLEAN, attach_error VARCHAR,
    detach_error VARCHAR);

CREATE TABLE IF NOT EXISTS namespaces (
    event_id BIGINT, uid VARCHAR, name VARCHAR, phase VARCHAR, spec_finalizers VARCHAR[]);

-- The recorder's own records: sessions, lists, relists and the stretches it did not see.
CREATE TABLE IF NOT EXISTS markers (
    event_id BIGINT, session VARCHAR, topic VARCHAR, resource VARCHAR, type VARCHAR,
    cause VARCHAR, detail VARCHAR, from_rv VARCHAR, to_rv VARCHAR,
    from_time TIMESTAMP, to_time TIMESTAMP, object_count BIGINT, recorder_version VARCHAR,
    kinds VARCHAR[]);
