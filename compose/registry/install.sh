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

cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}/registry
out=$cache/$APICURIO_VERSION
app=$out/app
done_marker=$out/installed

if [ -f "$done_marker" ]; then echo "$app"; exit 0; fi
mkdir -p "$out"
# Parallel first runs (two CI jobs, two pytest sessions) wait for one another.
exec 9>"$out/.lock"
flock 9
if [ -f "$done_marker" ]; then echo "$app"; exit 0; fi

work=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT

artifact=io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all
mvn -B -q -Dmaven.repo.local="$cache/m2" dependency:copy -Dartifact="$artifact" \
  -DoutputDirectory="$work" -Dmdep.stripVersion=true >&2
mkdir "$work/dist"
tar -xzf "$work"/apicurio-registry-app-all.tar.gz -C "$work/dist"
# The archive holds one directory with quarkus-run.jar (its name differs between releases).
run_jar=$(find "$work/dist" -name quarkus-run.jar -print -quit)
[ -n "$run_jar" ] || { echo "apicurio $APICURIO_VERSION: no quarkus-run.jar in $artifact" >&2; exit 1; }
rm -rf "$app"
mv "$(dirname "$run_jar")" "$app"
# The archive stays in the Maven repo only as long as it is needed: the unpacked copy is the cache.
rm -rf "$cache/m2/io/apicurio/apicurio-registry-app/$APICURIO_VERSION"
touch "$done_marker"
echo "$app"
