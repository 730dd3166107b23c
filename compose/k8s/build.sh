#!/usr/bin/env bash
# Build the Kubernetes binaries the tests run: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, the kubelet and kube-proxy of the real
# node, and kwok, from the Go module proxy, into a cache outside the clone. Rebuilds only
# what is missing.
#
#   compose/k8s/build.sh            # prints the bin directory on its last line
#
# KTRACE_CACHE (default ~/.cache/ktrace) holds the binaries and the Go caches.
set -euo pipefail

# shellcheck source=compose/k8s/versions.sh
. "$(dirname "$0")/versions.sh"

cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}
out=$cache/k8s/$K8S_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION
bin=$out/bin
export GOPATH=${GOPATH:-$cache/go} GOMODCACHE=${GOMODCACHE:-$cache/go/pkg/mod}
export GOCACHE=${GOCACHE:-$cache/go-build} GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

kubernetes=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
want=(etcd "${kubernetes[@]}" kwok)
have() { for b in "$@"; do [ -x "$bin/$b" ] || return 1; done; }
have_all() { have "${want[@]}"; }
if have_all; then echo "$bin"; exit 0; fi
mkdir -p "$bin" "$out/src"

build_kubernetes() {
  local src=$out/src/kubernetes minor=${K8S_VERSION#v1.}
  local staging_version=v0.${minor}
  mkdir -p "$src" && cd "$src"
  cat > go.mod <<MOD
module ktrace.local/k8sbuild

go 1.26
MOD
  { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
    printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "${kubernetes[@]}"; echo ')'; } > tools.go
  go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
  local upstream_mod
  upstream_mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # Every staging replace in kubernetes' go.mod becomes a replace to the published module.
  grep -oE 'k8s.io/[a-z0-9-]+ => \./staging' "$upstream_mod" | awk '{print $1}' | sort -u |
    while read -r m; do go mod edit -replace "$m=$m@$staging_version"; done
  go mod edit -require "k8s.io/kubernetes@$K8S_VERSION"
  go mod tidy
  local pkg=k8s.io/component-base/version
  local ldflags="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
  go build -ldflags "$ldflags" -o "$bin/" "${kubernetes[@]/#/k8s.io/kubernetes/cmd/}"
}

build_etcd() {
  local src=$out/src/etcd
  mkdir -p "$src" && cd "$src"
  cat > go.mod <<MOD
module ktrace.local/etcdbuild

go 1.26
MOD
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go mod tidy
  go build -ldflags "-s -w" -o "$bin/etcd" .
}

build_kwok() {
  GOBIN=$bin go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  # The stage files ship in the module; keep a copy beside the binaries.
  local moddir=$GOMODCACHE/sigs.k8s.io/kwok@$KWOK_VERSION
  rm -rf "$out/stages" && cp -r "$moddir/kustomize/stage" "$out/stages" && chmod -R u+w "$out/stages"
}

[ -x "$bin/etcd" ] || (build_etcd) >&2
[ -x "$bin/kwok" ] || (build_kwok) >&2
have "${kubernetes[@]}" || (build_kubernetes) >&2
have_all || { echo "build incomplete in $bin" >&2; exit 1; }
echo "$bin"
