#!/usr/bin/env bash
# Build promtool (Prometheus' rule checker and rule unit-test runner) from the Go module
# proxy into a cache outside the clone, for the alerting-rule tests of compose/prometheus/.
# Does nothing when that version is already built.
#
#   compose/prometheus/install.sh   # prints the promtool binary on its last line
#
# PROMETHEUS_VERSION picks the github.com/prometheus/prometheus module version (Prometheus
# 3.x is published as v0.3xx.y). KTRACE_CACHE (default ~/.cache/ktrace) holds the binary;
# the Go caches are the ones compose/k8s/build.sh uses.
set -euo pipefail

PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}

. "$(dirname "$0")/../cached-install.sh"
cached_install prometheus "$PROMETHEUS_VERSION" promtool

go_cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}
export GOPATH=${GOPATH:-$go_cache/go} GOMODCACHE=${GOMODCACHE:-$go_cache/go/pkg/mod}
export GOCACHE=${GOCACHE:-$go_cache/go-build} GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

GOBIN=$work go install -ldflags "-s -w" \
  "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION" >&2
mv "$work/promtool" "$result"
finish_install
