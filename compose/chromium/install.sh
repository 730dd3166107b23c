#!/usr/bin/env bash
# A real browser for the report's tests: Debian's chromium and chromium-driver (the only
# browser source these machines reach). Idempotent: does nothing when both are installed.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "chromium/chromium-driver missing: run as root, or apt-get install -y chromium chromium-driver" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends chromium chromium-driver
