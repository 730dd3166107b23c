-- model: macro(msg)
-- What Kubernetes components write in Event messages, parsed (documented in
-- docs/projections.md; the formats of Kubernetes 1.27–1.37 are unit-tested in
-- tests/test_replayer_messages.py).

-- kube-scheduler's FailedScheduling message, e.g.
--   0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}.
--   preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.
-- (older: "node(s) had taint {k: v}, that the pod didn't tolerate"; 1.8–1.10 predicate
-- names: "3 MatchNodeSelector"; before 1.8: "No nodes are available that match all of the
-- following predicates:: Insufficient cpu (3)"; without the node count: "pod has unbound
-- immediate PersistentVolumeClaims"). The main part is split into its "N reason" (or
-- "reason (N)") items; `preemption` keeps what the preemption attempt said.
regexp_extract(msg, '^(.*?)(\. preemption:.*)?\.?\s*$', 1)
