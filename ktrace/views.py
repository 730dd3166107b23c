"""What each command prints, declared once: its JSON keys (the schema docs/cli.md lists, in
the same words in ``demo``, ``incident`` and the command itself) and how they show in a
table. Analyses return (columns, rows); :meth:`View.rows` checks they are these keys."""

from __future__ import annotations

import dataclasses

from ktrace.output import Column as C, View

EVIDENCE = "event id of the record that shows it (`ktrace evidence ID`)"

STUCK = View("stuck", "one row per stuck object, most telling first", (
    C("kind", "Kind of the object"),
    C("namespace", "its namespace (none for cluster-scoped kinds)"),
    C("name", "its name"),
    C("uid", "its uid", show="wide"),
    C("problem", "terminating, pending, not_ready, not_created or rollout_stalled", flex=True),
    C("since", "when the problem began (RFC 3339)", show="wide"),
    C("stuck_for_s", "seconds stuck at the moment judged", kind="seconds", header="STUCK FOR"),
    C("top_cause", "the best-ranked cause", header="CAUSE", flex=True),
    C("causes", "every cause ranked: list of {cause, score, detail, evidence}",
      show="wide", flex=True),
    C("evidence_event_id", EVIDENCE),
), names=("name",))

TIMELINE = View("timeline", "one row per lifecycle step of each pod, in order", (
    C("pod", "the pod's name"),
    C("uid", "the pod's uid (a reused name is two pods)", show="wide"),
    C("step_no", "the step's number in this pod's life", show="wide", header="#"),
    C("step", "created, scheduled, running, ready, deletion_requested, …", flex=True),
    C("time", "when (RFC 3339)", kind="clock"),
    C("delta_s", "seconds since the previous step", kind="seconds", header="DELTA"),
    C("since_first_s", "seconds since the pod's first step", kind="seconds",
      header="SINCE FIRST", show="wide"),
    C("component", "who made the change (kubelet, kube-scheduler, …)", flex=True),
    C("evidence_event_id", EVIDENCE),
    C("detail", "what the record says", flex=True),
), names=("pod",), kind="pod")

GAPS = View("gaps", "slow steps, and stretches the recording did not see", (
    C("category", "unseen, slow or unknown (a slow step overlapping an unseen stretch)"),
    C("type", "what kind of gap", flex=True),
    C("namespace", "the object's namespace", show="wide"),
    C("name", "the object's name (none for a recording-wide gap)"),
    C("session", "recorder session", show="wide"),
    C("topic", "topic the gap is in", flex=True),
    C("start_at", "start (RFC 3339)"),
    C("end_at", "end (RFC 3339)", show="wide"),
    C("seconds", "how long", kind="seconds", header="LASTED"),
    C("threshold_s", "the threshold a slow step passed", kind="seconds", show="wide",
      header="THRESHOLD"),
    C("detail", "what happened", flex=True),
    C("evidence_event_id", EVIDENCE),
))

RACES = View("races", "terminating pods behind a Service: did containers stop before the "
             "endpoint went off", (
    C("namespace", "the pod's namespace"),
    C("pod", "the pod's name"),
    C("service", "the Service it was behind", flex=True),
    C("verdict", "stopped_before_endpoint_off (the race), within_margin, ok, …", flex=True),
    C("exposed_s", "seconds the endpoint stayed routable after containers stopped",
      kind="seconds", header="EXPOSED"),
    C("deletion_requested_at", "deletion requested (RFC 3339)", show="wide"),
    C("endpoint_off_at", "endpoint went not-ready or removed (RFC 3339)", show="wide"),
    C("off_state", "how the endpoint went off", show="wide", flex=True),
    C("containers_stopped_at", "containers stopped (RFC 3339)", show="wide"),
    C("request_to_endpoint_off_s", "seconds from the request to the endpoint going off",
      kind="seconds", show="wide", header="TO OFF"),
    C("evidence", "event ids of the records that show it", show="wide"),
), names=("pod",), kind="pod")

RACE_SUMMARY = View("race_summary", "per namespace: the distribution and a suggested "
                    "preStop delay", (
    C("namespace", "namespace"),
    C("pods", "terminating pods behind a Service"),
    C("raced", "of them, containers stopped before the endpoint went off"),
    C("within_margin", "of them, stopped within the margin after", header="MARGIN"),
    C("p50_request_to_off_s", "median seconds from request to endpoint off", kind="seconds",
      header="P50"),
    C("p99_request_to_off_s", "99th percentile of the same", kind="seconds", header="P99"),
    C("max_request_to_off_s", "the longest", kind="seconds", header="MAX"),
    C("suggested_prestop_s", "a preStop sleep that covers p99 plus the margin",
      kind="seconds", header="PRESTOP"),
))

CAPACITY_DIPS = View("capacity_dips", "stretches a Service had fewer ready endpoints than its "
                     "Deployment wants", (
    C("namespace", "namespace"),
    C("service", "the Service", flex=True),
    C("deployment", "the Deployment behind it"),
    C("desired", "replicas wanted"),
    C("min_ready", "fewest ready endpoints in the stretch", header="MIN"),
    C("start_at", "start (RFC 3339)"),
    C("end_at", "end (RFC 3339)", show="wide"),
    C("duration_s", "how long", kind="seconds", header="LASTED"),
    C("pods_off", "the pods whose endpoints were off", show="wide", flex=True),
))

STATE = View("state", "every object as it was at the moment asked for", (
    C("kind", "Kind"),
    C("namespace", "namespace"),
    C("name", "name"),
    C("uid", "uid", show="wide"),
    C("last_event", "type of its last record by then (ADDED, MODIFIED, …)", header="EVENT"),
    C("resource_version", "its resourceVersion by then", show="wide"),
    C("last_seen_at", "its last record's receive time; the table shows its age at --at",
      kind="age", header="AGE"),
    C("deletion_at", "deletionTimestamp, if set", show="wide"),
    C("finalizers", "finalizers, if any", show="wide", flex=True),
    C("phase", "a pod's phase"),
), names=("name",))
#: ``state --full``: the same, with each object's JSON (json/yaml/csv only)
STATE_FULL = dataclasses.replace(STATE, columns=STATE.columns + (
    C("object", "the object's JSON as it was (fetched from the source unless stored)",
      show="data"),))

TOPICS = View("topics", "one row per topic", (
    C("topic", "topic name (<prefix>.<resource>)"),
    C("partitions", "partitions"),
    C("records", "records held"),
    C("first_received_at", "the first record's receive time"),
    C("last_received_at", "the last record's receive time"),
), names=("topic",))

RECORDING = View("recording", "what the database holds", (
    C("records", "records loaded"),
    C("objects", "distinct objects (uids)"),
    C("first_received_at", "the first record's receive time"),
    C("last_received_at", "the last record's receive time"),
))

#: every fixed view by name: the sections of reports and the schemas docs/cli.md lists
VIEWS = {v.name: v for v in (STUCK, TIMELINE, GAPS, RACES, RACE_SUMMARY, CAPACITY_DIPS, STATE,
                             TOPICS, RECORDING)}
#: which views each command prints (docs/cli.md's JSON keys come from here)
COMMAND_VIEWS = {
    "stuck": ("stuck",), "timeline": ("timeline",), "gaps": ("gaps",), "state": ("state",),
    "topics": ("topics",), "races": ("races", "race_summary", "capacity_dips"),
    "demo": ("recording", "stuck", "races", "race_summary", "capacity_dips", "gaps"),
    "incident": ("recording", "stuck", "races", "race_summary", "capacity_dips", "gaps"),
}
