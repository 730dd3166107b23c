"""What each command prints, declared once: its JSON keys (the schema docs/cli.md lists, in
the same words in ``demo``, ``incident`` and the command itself) and how they show in a
table. Analyses return (columns, rows); :meth:`View.rows` checks they are these keys."""

from __future__ import annotations

import dataclasses

from ktrace.output import Column as C, View

EVIDENCE = ("evidence id of the record that shows it, RESOURCE:SESSION:SEQ — the same in every "
            "database loaded from the recording (`ktrace evidence ID`)")

#: the columns several views share, each declared once
KIND, NS, NAME = C("kind", "Kind"), C("namespace", "namespace"), C("name", "name")
POD = C("pod", "the pod's name")
EVIDENCE_ID = C("evidence_event_id", EVIDENCE, fit="whole")
FIRST_RECEIVED = C("first_received_at", "the first record's receive time")
LAST_RECEIVED = C("last_received_at", "the last record's receive time")

STUCK = View("stuck", "a list with one row per stuck object, most telling first", (
    C("kind", "Kind of the object", drop=3),
    C("namespace", "its namespace (none for cluster-scoped kinds)", drop=2),
    C("name", "its name"),
    C("uid", "its uid", show="wide"),
    C("problem", "terminating, pending, not_ready, unknown, not_created, rollout_stalled, "
                 "update_held, pods_missing, claim_pending, volume_missing, volume_misbound, "
                 "lost, released, failed, drain_blocked, no_ready_endpoints or node_not_ready",
      fit="whole",
      drop=1),
    C("since", "when the problem began (RFC 3339)", show="wide"),
    C("stuck_for_s", "seconds stuck at the moment judged (a table prints ≥ before a lower "
                     "bound: see stuck_for_at_least)", kind="seconds", header="STUCK FOR",
      at_least="stuck_for_at_least"),
    C("top_cause", "the best-ranked cause", header="CAUSE", fit="whole"),
    C("causes", "every cause ranked: list of {cause, score, detail, evidence}",
      show="wide", fit="prose"),
    EVIDENCE_ID,
    C("cluster", "the cluster it belongs to (each judged at the end of its own data)",
      show="wide"),
    C("stuck_for_at_least", "true when the data has no receive clock (an import of kubectl "
                            "output): its end is the last time an object states, so the object "
                            "was stuck at least stuck_for_s", show="data"),
), names=("name",))

TIMELINE = View("timeline", "a list with one row per lifecycle step of each pod, in order", (
    C("namespace", "the pod's namespace (a workload's pods may span several)", drop=2),
    POD,
    C("uid", "the pod's uid (a reused name is two pods)", show="wide"),
    C("step_no", "the step's number in this pod's life", show="wide", header="#"),
    C("step", "created, scheduled, running, ready, deletion_requested, …", fit="whole"),
    C("time", "when (RFC 3339)", kind="clock"),
    C("delta_s", "seconds since the previous step", kind="seconds", header="DELTA"),
    C("since_first_s", "seconds since the pod's first step", kind="seconds",
      header="SINCE FIRST", show="wide"),
    C("component", "who made the change (kubelet, kube-scheduler, …)", drop=3),
    EVIDENCE_ID,
    C("detail", "what the record says", fit="prose", drop=1),
), names=("pod",), kind="pod")

GAPS = View("gaps", "a list of slow steps and stretches the recording did not see", (
    C("category", "unseen, slow or unknown (a slow step overlapping an unseen stretch)",
      fit="whole", drop=2),
    C("type", "what kind of gap", fit="whole"),
    C("namespace", "the object's namespace", show="wide"),
    C("name", "the object's name (none for a recording-wide gap)"),
    C("session", "recorder session", show="wide"),
    C("topics", "the topics it is in: one event of the whole recorder (every watch expiring "
                "at once) is one row listing them; empty for a recording-wide gap",
      fit="prose", drop=1),
    C("start_at", "start (RFC 3339)", kind="clock"),
    C("end_at", "end (RFC 3339)", show="wide"),
    C("seconds", "how long", kind="seconds", header="LASTED"),
    C("threshold_s", "the threshold a slow step passed", kind="seconds", show="wide",
      header="THRESHOLD"),
    C("detail", "what happened", fit="prose", drop=3),
    C("evidence_event_id", EVIDENCE + "; of a row of several topics, the first one's",
      fit="whole"),
), names=("name",), kind="pod")

RACES = View("races", "terminating pods behind a Service: did containers stop before the "
             "endpoint went off", (
    C("namespace", "the pod's namespace"),
    POD,
    C("service", "the Service it was behind"),
    C("verdict", "stopped_before_endpoint_off (the race), within_margin, ok, …", fit="whole"),
    C("exposed_s", "seconds the endpoint stayed routable after containers stopped (0 when "
                   "it went off first)", kind="seconds", header="EXPOSED"),
    C("margin_s", "seconds the endpoint went off before the containers stopped (0 in a race)",
      kind="seconds", header="MARGIN"),
    C("deletion_requested_at", "deletion requested (RFC 3339)", show="wide"),
    C("endpoint_off_at", "endpoint went not-ready or removed (RFC 3339)", show="wide"),
    C("off_state", "how the endpoint went off", show="wide", fit="whole"),
    C("containers_stopped_at", "containers stopped (RFC 3339)", show="wide"),
    C("request_to_endpoint_off_s", "seconds from the request to the endpoint going off",
      kind="seconds", show="wide", header="TO OFF"),
    C("evidence", "evidence ids of the records that show it", show="wide"),
), names=("pod",), kind="pod")

RACE_SUMMARY = View("race_summary", "per namespace: the distribution and a suggested "
                    "preStop delay", (
    NS,
    C("pods", "terminating pods behind a Service"),
    C("raced", "of them, containers stopped before the endpoint went off"),
    C("within_margin", "of them, stopped less than --margin after the endpoint went off (a "
                       "narrow race)", header="NARROW"),
    C("p50_request_to_off_s", "median seconds from the deletion request to the endpoint going "
                              "off", kind="seconds", header="P50 TO OFF"),
    C("p99_request_to_off_s", "99th percentile of the same", kind="seconds",
      header="P99 TO OFF"),
    C("max_request_to_off_s", "the longest", kind="seconds", header="MAX TO OFF"),
    C("suggested_prestop_s", "a preStop sleep that covers p99 plus the margin; none where "
                             "no pod raced", kind="seconds", header="PRESTOP"),
))

CAPACITY_DIPS = View("capacity_dips", "stretches a Service had fewer ready endpoints than its "
                     "Deployment wants", (
    NS,
    C("service", "the Service"),
    C("deployment", "the Deployment behind it"),
    C("desired", "replicas wanted"),
    C("min_ready", "fewest ready endpoints in the stretch", header="MIN"),
    C("start_at", "start (RFC 3339)"),
    C("end_at", "end (RFC 3339)", show="wide"),
    C("duration_s", "how long", kind="seconds", header="LASTED"),
    C("pods_off", "the pods whose endpoints were off", show="wide", fit="prose"),
))

STATE = View("state", "a list of every object as it was at the moment asked for", (
    KIND,
    NS,
    NAME,
    C("uid", "uid", show="wide"),
    C("last_event", "type of its last record by then (ADDED, MODIFIED, …)", header="EVENT",
      fit="whole"),
    C("resource_version", "its resourceVersion by then", show="wide"),
    C("last_seen_at", "its last record's receive time; the table shows its age at --at",
      kind="age", header="AGE"),
    C("deletion_at", "deletionTimestamp, if set", show="wide"),
    C("finalizers", "finalizers, if any", show="wide", fit="prose"),
    C("phase", "a pod's phase", fit="whole"),
), names=("name",))
#: ``state --full``: the same, with each object's JSON (json/yaml/csv only)
STATE_FULL = dataclasses.replace(STATE, columns=STATE.columns + (
    C("object", "the object's JSON as it was (fetched from the source unless stored)",
      show="data"),))

TOPICS = View("topics", "a list with one row per topic", (
    C("topic", "topic name (<prefix>.<resource>)", fit="whole"),
    C("partitions", "partitions", drop=2),
    C("records", "records held"),
    C("first_received_at", "the first record's receive time", drop=1),
    LAST_RECEIVED,
), names=("topic",))

RECORDING = View("recording", "what the database holds", (
    C("records", "records loaded"),
    C("objects", "distinct objects (uids)"),
    FIRST_RECEIVED,
    LAST_RECEIVED,
))

EXPLAIN = View("explain", "a list with one story per object the target names (a document: csv refused)", (
    KIND,
    NS,
    NAME,
    C("uid", "uid"),
    C("first_seen", "its first record's receive time"),
    C("last_seen", "its last record's receive time"),
    C("timeline", "its lifecycle steps: list of {step_no, step, time, component, derived, "
      "detail, evidence_event_id}"),
    C("findings", "what ktrace found: list of {topic, sentence, evidence, advice}; topic "
                  "stuck (a cause holding it), outcome (how a pod ended: evicted, admission, "
                  "preempted, oom_killed, node_shutdown), pressure (a Node's MemoryPressure, DiskPressure, PIDPressure or NetworkUnavailable condition True: since when, until when or still at the end and how long by then (at least, without a receive clock; derived from its lastTransitionTime), the kubelet's reason and message, its EvictionThresholdMet Event and the pods it evicted or refused for that resource meanwhile — a condition, never stuck), drain (a Node's or budget's past drain a "
                  "PodDisruptionBudget held, and whether it then passed), race, recording, "
                  "deletion (who asked for it; the finalizers still holding an object being "
                  "deleted and who removes each), restarts, startup, slow or unknown; each "
                  "cause's sentence carries "
                  "the message that decides it"),
), names=("name",))

STORY_STEPS = View("story_steps", "the steps of an explained object (its table)", (
    C("step_no", "the step's number", show="data"),
    C("time", "when", kind="clock"),
    C("derived", "true when the time comes from the object, not a record seen", fit="whole",
      drop=1),
    C("step", "what happened", fit="whole"),
    C("component", "who did it", drop=3),
    C("detail", "what the record says", fit="prose", drop=2),
    EVIDENCE_ID,
))

EVIDENCE_RECORD = View("evidence", "the record (one object, not a list; csv refused)", (
    C("id", "the evidence id (RESOURCE:SESSION:SEQ, the same in every database loaded from "
      "the recording)"),
    C("event_id", "this database's event_id of the record (what `ktrace query` sees)"),
    C("kind", "Kind of the object"),
    C("namespace", "its namespace"),
    C("name", "its name"),
    C("uid", "its uid"),
    C("type", "ADDED, MODIFIED, DELETED, or a recorder marker (GAP, RELIST, …)"),
    C("inferred", "true when the recorder inferred it from a relist"),
    C("resource_version", "the object's resourceVersion"),
    C("received_at", "when the recorder received it"),
    C("time_source", "received, or derived from the object (imports)"),
    C("component", "who made the change"),
    C("attribution", "why ktrace names that component"),
    C("topic", "source topic"),
    C("partition", "source partition"),
    C("offset", "source offset (the local log: a byte position)"),
    C("cluster", "cluster name the recorder stored"),
    C("session", "recorder session"),
    C("seq", "sequence number in the session and topic"),
    C("truncated", "true when the object was cut to fit the topic's message size"),
    C("object_size", "the object's size in bytes as received"),
    C("facts", "the typed tables' rows for this record: table name → list of rows"),
    C("object", "the stored object (redacted as stored)"),
), names=("name",))


def _get_view(kind: str, columns: tuple[C, ...], *, age: str = "table") -> View:
    """``ktrace get``'s rows of one kind: its kubectl columns, then what every row carries."""
    return View(f"get_{kind.lower()}", f"{kind} objects as they were at --at", (
        *columns,
        C("age_s", "seconds since creationTimestamp, at --at or the end of its cluster's "
                   "data (the earlier)", kind="seconds", header="AGE", show=age),
        C("kind", "Kind", show="data"),
        C("uid", "uid", show="wide"),
        C("cluster", "cluster", show="wide"),
        C("created_at", "creationTimestamp", show="data"),
        C("labels", "labels (a table shows them with --show-labels or -L KEY)", show="data"),
    ), names=("name",), kind=kind.lower())


GET_VIEWS = {
    "Pod": _get_view("Pod", (NS, NAME, C("ready", "ready containers / containers"),
                             C("status", "STATUS as kubectl prints it (Running, "
                                         "CrashLoopBackOff, Init:0/1, Terminating, …)", fit="whole"),
                             C("restarts", "restarts of its containers (a table adds how "
                                           "long ago the last one was)",
                               since="last_restart_at"),
                             C("last_restart_at", "when a restarted container last stopped "
                                                  "(its lastState.terminated.finishedAt)",
                               show="data"),
                             C("ip", "pod IP", show="wide"),
                             C("node", "the node it runs on"))),
    "Deployment": _get_view("Deployment", (NS, NAME, C("ready", "ready / desired replicas"),
                                           C("up_to_date", "updated replicas"),
                                           C("available", "available replicas"))),
    "ReplicaSet": _get_view("ReplicaSet", (NS, NAME, C("desired", "desired replicas"),
                                           C("current", "replicas"),
                                           C("ready_replicas", "ready replicas", header="READY"))),
    "StatefulSet": _get_view("StatefulSet", (NS, NAME, C("ready", "ready / desired replicas"))),
    "DaemonSet": _get_view("DaemonSet", (NS, NAME, C("desired", "desired scheduled"),
                                         C("current", "scheduled"),
                                         C("ready_replicas", "ready", header="READY"),
                                         C("up_to_date", "updated"),
                                         C("available", "available"))),
    "Job": _get_view("Job", (NS, NAME, C("succeeded", "pods succeeded"),
                             C("active", "pods active"), C("failed", "pods failed"))),
    "Node": _get_view("Node", (NAME, C("status", "Ready, NotReady or Unknown "
                                                 "(,SchedulingDisabled when cordoned)"),
                               C("roles", "node-role labels"))),
    "Namespace": _get_view("Namespace", (NAME, C("status", "Active or Terminating"))),
    "PersistentVolumeClaim": _get_view("PersistentVolumeClaim", (
        NS, NAME, C("status", "phase"), C("volume", "bound volume"),
        C("storage_class", "storage class", show="wide"))),
    "PersistentVolume": _get_view("PersistentVolume", (
        NAME, C("status", "phase"), C("claim", "namespace/name of its claim"),
        C("storage_class", "storage class", show="wide"))),
    "Event": _get_view("Event", (
        NS, C("last_seen", "the last time it was observed", kind="age", header="LAST SEEN"),
        C("type", "Normal or Warning"), C("reason", "reason"),
        C("object", "Kind/name of the object it is about"),
        C("message", "what it says", fit="prose")), age="data"),
}
GET_OTHER = _get_view("Object", (NS, NAME))

INFO_CLUSTERS = View("info_clusters", "each cluster's recorded window", (
    C("cluster", "cluster name (record --cluster, import --cluster)"),
    C("first_received_at", "its first record's receive time"),
    C("last_received_at", "its last record's receive time"),
    C("window_s", "seconds between them", kind="seconds", header="WINDOW"),
    C("records", "records (a window's own: not the state at its start)"),
    C("state_at_start", "records loaded as the state at a window's start: each object's "
      "last version before --since", drop=1),
    C("objects", "distinct objects", drop=1), C("sessions", "recorder sessions", drop=2),
))
INFO_SESSIONS = View("info_sessions", "recorder sessions and kubectl imports", (
    C("cluster", "cluster"), C("session", "session id (import:FILE for an import)"),
    C("first_received_at", "first record"), C("last_received_at", "last record"),
    C("records", "records"), C("ended", "whether it ended cleanly (SESSION_END)"),
))
INFO_KINDS = View("info_kinds", "the kinds held", (
    KIND, C("resource", "resource (topic suffix)"), C("records", "records"),
    C("objects", "distinct objects"), C("at_end", "objects that exist at the end of the data"),
))
INFO_UNSEEN = View("info_unseen", "stretches the recording did not see, by type", (
    C("type", "gap_marker, session_gap, session_lost, sequence_hole, damaged, …"),
    C("stretches", "how many"),
    C("total_s", "the time they cover, overlapping stretches counted once", kind="seconds",
      header="COVERED"),
    C("first_start_at", "the first one's start"),
    C("last_end_at", "the last one's end", drop=2),
    C("topics", "topics they are in", fit="prose", drop=1),
))

#: every fixed view by name: the sections of reports and the schemas docs/cli.md lists
VIEWS = {v.name: v for v in (STUCK, TIMELINE, GAPS, RACES, RACE_SUMMARY, CAPACITY_DIPS, STATE,
                             TOPICS, RECORDING, EXPLAIN, EVIDENCE_RECORD, *GET_VIEWS.values(),
                             GET_OTHER, INFO_CLUSTERS, INFO_SESSIONS, INFO_KINDS, INFO_UNSEEN)}
#: which views each command prints (docs/cli.md's JSON keys come from here)
COMMAND_VIEWS = {
    "stuck": ("stuck",), "timeline": ("timeline",), "gaps": ("gaps",), "state": ("state",),
    "topics": ("topics",), "races": ("races", "race_summary", "capacity_dips"),
    "explain": ("explain",), "evidence": ("evidence",),
    "get": tuple(v.name for v in (*GET_VIEWS.values(), GET_OTHER)),
    "info": ("info_clusters", "info_sessions", "info_kinds", "info_unseen"),
    "demo": ("recording", "stuck", "races", "race_summary", "capacity_dips", "gaps"),
    "incident": ("recording", "stuck", "races", "race_summary", "capacity_dips", "gaps"),
}
