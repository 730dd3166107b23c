#!/usr/bin/env bash
# The tests' real node: containerd and one kubelet, in a mount namespace of their own.
# They must share one: memory-backed volumes and ServiceAccount tokens that the kubelet
# mounts are otherwise invisible inside containers. Mounts made here never reach the host
# and go with the namespace. tests/infra/node.py starts it and stops it by PID:
#
#   unshare --mount --propagation slave compose/node/run.sh WORK CONTAINERD_CONFIG -- KUBELET ARGS...
set -euo pipefail
work=$1 containerd_config=$2
shift 3

# containerd and its shims keep sockets under /run/containerd and pods' network namespaces
# under /run/netns whatever the config says: a private /run keeps them off the host's.
mount -t tmpfs -o mode=0755 ktrace-node-run /run
# Host directories the kubelet and the CNI tools write to whatever they are told
# (/var/log/containers, /var/lib/cni): colon-separated in KTRACE_NODE_PRIVATE_DIRS.
IFS=: read -ra private_dirs <<< "${KTRACE_NODE_PRIVATE_DIRS:-}"
for dir in "${private_dirs[@]}"; do mount -t tmpfs -o mode=0755 ktrace-node-private "$dir"; done
# Read-only stand-ins for kernel settings the kubelet (overcommit, panic) and the CNI bridge
# (ip_forward) would otherwise change on the host: both read first and keep a right value.
mkdir -p "$work/standins"
for setting in vm/overcommit_memory=1 kernel/panic=10 kernel/panic_on_oops=1 net/ipv4/ip_forward=1; do
  key=${setting%%=*}
  standin=$work/standins/${key//\//.}
  echo "${setting#*=}" > "$standin"
  mount --bind "$standin" "/proc/sys/$key"
  mount -o remount,bind,ro "/proc/sys/$key"
done

containerd --config "$containerd_config" >> "$work/logs/containerd.log" 2>&1 &
containerd_pid=$!
kubelet_pid=
stop() { kill -TERM $kubelet_pid $containerd_pid 2>/dev/null || true; wait || true; exit 0; }
trap stop TERM INT

socket=$(sed -n 's/^ *address *= *"\(.*\.sock\)"/\1/p' "$containerd_config" | head -n 1)
for _ in $(seq 200); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { echo "containerd did not open $socket" >&2; exit 1; }

"$@" >> "$work/logs/kubelet.log" 2>&1 &
kubelet_pid=$!
# Either process ending ends the node: the fixture sees it and shows the logs.
wait -n $containerd_pid $kubelet_pid || true
stop
