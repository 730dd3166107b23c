"""The recorder: list/watch a Kubernetes API server into Avro records, losslessly.

How it fits together (``recorder.session`` wires it): one ``informer.Informer`` thread per
watched resource reads the API server (``kube/``) and reports items in server order into one
bounded queue; one ``writer.Writer`` turns them into records (``attribution``, ``schemas.redaction``,
``truncation``) with gap-free seq per (session, topic) and sends them to a sink (Kafka
behind ``spooling.sink``, or the local log); after each flush the ``checkpoint`` is saved.

Decisions a reader of the records needs:

- Session markers are per topic: every topic of a session starts with SESSION_START (seq 0,
  cause ``start`` or ``resume from checkpoint``) and, unless the process was killed, ends
  with SESSION_END (cause ``SIGTERM``, ``SIGINT``, ``duration``, ``error: …``).
- A fresh session (no checkpoint) records its first LIST as LISTED records, then SYNCED.
  A resumed session watches on from the checkpoint's resourceVersion: no LIST, no GAP.
- A relist (410 Gone, or a checkpoint that expired) writes RELIST, GAP [last seen RV/time,
  relist RV/time], then only the differences from the last known state — MODIFIED or ADDED
  with ``inferred=true``, INFERRED_DELETED — then SYNCED (counts in ``marker.detail``). An
  unchanged object (same resourceVersion) gets no record: the GAP + SYNCED pair says it was
  seen unchanged, which stays distinct from "not seen" (inside a GAP, before SYNCED).
- BOOKMARKs move the checkpoint; a BOOKMARK marker is written at most once a minute per watch.
- Duplicates, never losses: after a SIGKILL the next session re-sends what arrived after
  the last checkpoint (at most a flush interval, 0.5 s): same (uid, resourceVersion), new
  session. When Kafka fails, records not yet acknowledged are spooled and may reach Kafka
  twice: same (session, topic, seq). Readers dedupe on those keys; order is kept either way.
"""
