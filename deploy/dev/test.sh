#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine (root): installs Java 17 and Maven when missing, sets up the
# local Docker engine and test images (docker-engine.sh) and Chromium for the page test (chromium.sh), then builds
# and runs every test against the real engine and real ZooKeeper servers. Exit code: Maven's.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
bash deploy/dev/java.sh
bash deploy/dev/docker-engine.sh
bash deploy/dev/chromium.sh
rc=0
mvn -B ${MAVEN_ARGS:-} package "$@" || rc=$?
# The history checker's verdict (seed, operations, violations) is in its surefire output file; show it here.
grep -h '^history: seed=.*violations=' agent/target/surefire-reports/*HistoryCheck*-output.txt 2>/dev/null || true
exit $rc
