#!/usr/bin/env bash
# Install what the tests' real node needs beside the kubelet (which compose/k8s/build.sh
# builds with the control plane): Debian's containerd, runc and CNI plugins, busybox-static
# for the test images, dbus-daemon for the private system bus of the logind stand-in
# (tests/infra/logind.py), and the pause (sandbox) binary compiled from the kubernetes module's
# own build/pause/linux/pause.c, since no registry can serve registry.k8s.io/pause.
#
#   compose/node/install.sh         # prints the node cache dir (holds bin/pause) on its last line
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=compose/k8s/versions.sh
. "$here/../k8s/versions.sh"

packages=(containerd runc containernetworking-plugins busybox-static gcc libc6-dev dbus-daemon)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}
out=$cache/node/$K8S_VERSION
if [ ! -x "$out/bin/pause" ]; then
  export GOPATH=${GOPATH:-$cache/go} GOMODCACHE=${GOMODCACHE:-$cache/go/pkg/mod} GOTOOLCHAIN=local GOFLAGS=-mod=mod
  source_dir=$(cd /tmp && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p "$out/bin"
  # The flags of kubernetes' build/pause/Makefile, its version stamped the same way.
  gcc -Os -Wall -Werror -static "-DVERSION=ktrace-$K8S_VERSION" -o "$out/bin/pause.tmp" \
    "$source_dir/build/pause/linux/pause.c"
  mv "$out/bin/pause.tmp" "$out/bin/pause"
fi
echo "$out"
