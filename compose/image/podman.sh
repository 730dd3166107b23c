#!/usr/bin/env bash
# podman with ktrace's own container store (under the cache: the host's store is left alone)
# and the settings these machines need (compose/image/containers.conf).
#
#   compose/image/podman.sh run --rm localhost/ktrace:0.1.0 --help
here=$(cd "$(dirname "$0")" && pwd)
cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}/image
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}
exec podman --root "$cache/store" --runroot "$cache/run" --storage-driver vfs "$@"
