-- model: macro(message)
-- Which of the kubelet's three paths wrote a DisruptionTarget TerminationByKubelet
-- condition, read from its message (Kubernetes v1.37.2): pkg/kubelet/preemption (a critical
-- pod admitted), pkg/kubelet/nodeshutdown (graceful node shutdown) — fixed strings — else
-- pkg/kubelet/eviction (node-pressure eviction: its message names the resource); NULL
-- without a message.
CASE WHEN message = 'Pod was preempted by Kubelet to accommodate a critical pod.'
         THEN 'critical-pod preemption'
     WHEN message = 'Pod was terminated in response to imminent node shutdown.'
         THEN 'graceful node shutdown'
     WHEN message IS NOT NULL THEN 'node-pressure eviction' END
