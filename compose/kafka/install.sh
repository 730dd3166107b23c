#!/usr/bin/env bash
# Install Apache Kafka (broker + controller, KRaft) from Maven Central into a
# cache outside the clone, for the tests' LocalKafkaBroker and for .ci/run.
# Does nothing when that version is already installed.
#
#   compose/kafka/install.sh        # prints the libs directory on its last line
#
# KAFKA_VERSION picks the org.apache.kafka:kafka_2.13 release (default 4.4.0).
# KTRACE_CACHE (default ~/.cache/ktrace) holds the jars and Maven's local repo.
set -euo pipefail

KAFKA_VERSION=${KAFKA_VERSION:-4.4.0}

. "$(dirname "$0")/../cached-install.sh"
cached_install kafka "$KAFKA_VERSION" libs

mvn_() { mvn -B -q -Dmaven.repo.local="$cache/m2" -f "$work/pom.xml" "$@"; }

write_pom() { # write_pom <dependency>... ; each dependency is group:artifact:version
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '<groupId>ktrace.local</groupId><artifactId>kafka-libs</artifactId><version>0</version>'
    echo '<packaging>pom</packaging><dependencies>'
    local d
    for d in "$@"; do
      IFS=: read -r g a v <<<"$d"
      echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
    done
    echo '</dependencies></project>'
  } >"$work/pom.xml"
}

resolved_version() { # resolved_version <group:artifact> -> version in Kafka's runtime classpath
  sed -n "s/^ *$1:jar:\([^:]*\):.*/\1/p" "$work/deps.txt" | head -n 1
}

# Kafka declares log4j-core (through kafka-server) and slf4j-api but no binding
# between them: read both versions from Kafka's own dependencies, then add the
# matching log4j binding (slf4j 1.x -> log4j-slf4j-impl, 2.x -> log4j-slf4j2-impl).
write_pom "org.apache.kafka:kafka_2.13:$KAFKA_VERSION"
mvn_ dependency:list -DincludeScope=runtime -DoutputFile="$work/deps.txt" >&2
log4j=$(resolved_version org.apache.logging.log4j:log4j-core)
slf4j=$(resolved_version org.slf4j:slf4j-api)
[ -n "$log4j" ] && [ -n "$slf4j" ] || { echo "kafka $KAFKA_VERSION: no log4j-core/slf4j-api in its dependencies" >&2; exit 1; }
case $slf4j in
  1.*) binding=log4j-slf4j-impl ;;
  *) binding=log4j-slf4j2-impl ;;
esac
echo "kafka $KAFKA_VERSION: log4j $log4j, slf4j $slf4j -> $binding" >&2

write_pom "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" \
  "org.apache.logging.log4j:log4j-core:$log4j" \
  "org.apache.logging.log4j:$binding:$log4j"
mvn_ dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/libs" >&2
rm -rf "$result"
mv "$work/libs" "$result"
finish_install
