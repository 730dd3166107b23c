#!/usr/bin/env bash
# Build helm from the Go module proxy into a cache outside the clone, beside the control
# plane's binaries and sharing their Go caches. Builds only when the version is missing.
#
#   compose/helm/install.sh         # prints the helm binary's path on its last line
#
# KTRACE_CACHE (default ~/.cache/ktrace) holds the binary and the Go caches; HELM_VERSION
# may be overridden from the environment.
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v4.3.2}
cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}
bin=$cache/helm/$HELM_VERSION/bin
if [ -x "$bin/helm" ]; then echo "$bin/helm"; exit 0; fi

export GOPATH=${GOPATH:-$cache/go} GOMODCACHE=${GOMODCACHE:-$cache/go/pkg/mod}
export GOCACHE=${GOCACHE:-$cache/go-build} GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
mkdir -p "$bin"
exec 9>"$bin/.lock"
flock 9 # parallel first runs wait for one build
if [ ! -x "$bin/helm" ]; then
  # Stamp the version `helm version` prints, as helm's own release build does.
  GOBIN=$bin go install -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2
fi
echo "$bin/helm"
