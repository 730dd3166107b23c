#!/usr/bin/env bash
# The image's base, made from Debian's archive since no registry can serve one: bookworm's
# minimal root filesystem with python3 (3.11) and venv, trusting the same CA certificates as
# this machine (pip runs inside the build, through whatever TLS inspection the host trusts).
# Cached outside the clone as a tar; compose/image/build.sh imports it.
#
#   compose/image/base.sh           # prints the base's tar on its last line
set -euo pipefail
cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}/image
base=$cache/debian-python-3.11-bookworm.tar
if [ -s "$base" ]; then echo "$base"; exit 0; fi
command -v debootstrap >/dev/null || {
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
}
mkdir -p "$cache"
exec 9>"$cache/.base.lock"
flock 9
if [ -s "$base" ]; then echo "$base"; exit 0; fi
rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
chmod 0755 "$rootfs"  # the image's / (mktemp makes it 0700: only root could enter)
trap 'rm -rf "$rootfs"' EXIT
mirror=$(sed -n 's/^URIs: *\(.*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
  bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >&2
cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
chroot "$rootfs" update-ca-certificates >&2
# An image needs no package cache, docs or man pages.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
       "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*
tar -C "$rootfs" --numeric-owner -cf "$base.tmp" .
mv "$base.tmp" "$base"
echo "$base"
