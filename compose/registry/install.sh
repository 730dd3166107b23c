#!/usr/bin/env bash
# Install Apicurio Registry (a Confluent-compatible Schema Registry, in-memory storage) from
# Maven Central into a cache outside the clone, for the tests' LocalRegistry and for .ci/run.
# Does nothing when that version is already installed.
#
#   compose/registry/install.sh     # prints the directory holding quarkus-run.jar on its last line
#
# APICURIO_VERSION picks the io.apicurio:apicurio-registry-app release (default 3.3.3; 3.x
# runs on Java 21+, 2.6.x on Java 17). KTRACE_CACHE (default ~/.cache/ktrace) holds the
# unpacked distribution and Maven's local repo.
set -euo pipefail

APICURIO_VERSION=${APICURIO_VERSION:-3.3.3}

. "$(dirname "$0")/../cached-install.sh"
cached_install registry "$APICURIO_VERSION" app

artifact=io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all
mvn -B -q -Dmaven.repo.local="$cache/m2" dependency:copy -Dartifact="$artifact" \
  -DoutputDirectory="$work" -Dmdep.stripVersion=true >&2
mkdir "$work/dist"
tar -xzf "$work"/apicurio-registry-app-all.tar.gz -C "$work/dist"
# The archive holds one directory with quarkus-run.jar (its name differs between releases).
run_jar=$(find "$work/dist" -name quarkus-run.jar -print -quit)
[ -n "$run_jar" ] || { echo "apicurio $APICURIO_VERSION: no quarkus-run.jar in $artifact" >&2; exit 1; }
rm -rf "$result"
mv "$(dirname "$run_jar")" "$result"
# The archive stays in the Maven repo only as long as it is needed: the unpacked copy is the cache.
rm -rf "$cache/m2/io/apicurio/apicurio-registry-app/$APICURIO_VERSION"
finish_install
