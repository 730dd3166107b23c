-- model: macro(m)
-- A message as ktrace shows it, the one place it is cleaned: without the blank lines and
-- spaces around it (a container's termination message usually ends with a newline, the
-- kubelet's eviction message with a space); NULL when nothing is left. The typed tables
-- hold every object's and Event's message so (k8s_events, pods, containers, conditions).
nullif(trim(m, ' ' || chr(9) || chr(10) || chr(13)), '')
