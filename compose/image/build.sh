#!/usr/bin/env bash
# Build the ktrace image from compose/Dockerfile without a Docker engine: buildah (daemonless)
# over the Debian base of compose/image/base.sh, in a container store of its own under the
# cache (the host's store is left alone), saved as an OCI archive that podman or the real
# node's containerd imports.
#
#   compose/image/build.sh          # prints the archive's path on its last line
#
# IMAGE (default localhost/ktrace:<version from pyproject.toml>) names it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}/image
for tool in buildah podman; do
  command -v $tool >/dev/null || {
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends buildah podman uidmap >&2
    break
  }
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/pyproject.toml")
image=${IMAGE:-localhost/ktrace:$version}
base_image=localhost/debian-python:3.11-bookworm
podman=$repo/compose/image/podman.sh
# Rebuilt only when what goes into it changed: the archive is named by its context's digest.
context=$(cd "$repo" && find pyproject.toml README.md compose/Dockerfile compose/Dockerfile.dockerignore \
            schemas transports recorder replayer ktrace -type f -not -path '*/__pycache__/*' -print0 |
          sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
archive=$cache/ktrace-$version-$context.oci.tar
if [ -s "$archive" ]; then
  "$podman" image exists "$image" || "$podman" load -i "$archive" >&2
  echo "$archive"; exit 0
fi
base=$("$repo/compose/image/base.sh")
"$podman" image exists "$base_image" || "$podman" import "$base" "$base_image" >&2
# BUILDAH_ISOLATION=chroot: no user namespaces or cgroups needed for RUN steps here.
BUILDAH_ISOLATION=chroot buildah --root "$cache/store" --runroot "$cache/run" --storage-driver vfs bud --pull=never --layers=false \
  --ignorefile "$repo/compose/Dockerfile.dockerignore" --build-arg PYTHON_IMAGE="$base_image" \
  -f "$repo/compose/Dockerfile" -t "$image" "$repo" >&2
rm -f "$cache"/ktrace-"$version"-*.oci.tar
"$podman" save --format oci-archive -o "$archive.tmp" "$image" >&2
mv "$archive.tmp" "$archive"
# The image this one replaced under the tag is left untagged: remove it (and any like it),
# or every build keeps ~0.5 GB more in the store (unless a container still uses it).
"$podman" image prune -f >&2
echo "$archive"
