#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine (root): installs Java 17 and Maven when missing, sets up the
# local Docker engine and test images (docker-engine.sh), Chromium for the page test (chromium.sh), and Prometheus and
# Alertmanager for the window gates' and silences' tests (Debian's packages; each test starts its own server on
# loopback), then builds
# and runs every test against the real engine and real ZooKeeper servers: the unit tests (surefire, *Test), then,
# after the jars are packaged, the integration tests on the fleet on one machine (failsafe, *IT: they bring
# deploy/dev/fleet.sh up and down themselves); then the packages in a clean Debian container (package-test.sh).
# Exit code: Maven's (an IT that fails fails it), or 1 when the packages' test fails.
#
# --fast: the edit-test loop, `mvn test` without the tests tagged restarts-dockerd or slow and without the fleet's
# integration tests (what it leaves out and why: README, "The tests"). CI runs everything.
set -euo pipefail
fast=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
bash deploy/dev/java.sh
bash deploy/dev/docker-engine.sh
bash deploy/dev/chromium.sh
# libfaketime: the fault tests run an agent whose clock is five minutes off (AgentClockSkewTest, FleetHistoryIT).
if [ ! -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ]; then
  apt-get install -y -q libfaketime >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libfaketime >/dev/null; }
fi
# prometheus and prometheus-alertmanager: the window gates' and silences' tests run real servers (Debian's packages;
# LoopbackServer in the tests starts its own, on loopback; the packages' services are not used).
if [ ! -x /usr/bin/prometheus ] || [ ! -x /usr/bin/prometheus-alertmanager ]; then
  export DEBIAN_FRONTEND=noninteractive
  # policy-rc.d: the packages' postinst would start their services on :9090 and :9093
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -q --no-install-recommends prometheus prometheus-alertmanager >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends prometheus prometheus-alertmanager >/dev/null; }
  rm -f /usr/sbin/policy-rc.d
fi
rc=0
fleet_was_up=0; [ -f /run/mesh-fleet/env ] && fleet_was_up=1
# C1 only and the serial collector, for Maven's JVM and the test JVMs (surefire's and failsafe's; the agents and
# coordinators the tests start run as their launchers run them): a dozen short-lived JVMs share 2 cores here, and C2's
# compiling and the parallel collector's threads took half the CPU of a --fast run (218 -> 112 CPU seconds).
jvm="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
export MAVEN_OPTS="${MAVEN_OPTS:-$jvm}"
if [ "$fast" = 1 ]; then
  mvn -B ${MAVEN_ARGS:-} test -Dmesh.test.excluded=restarts-dockerd,engine-alone,slow -Dmesh.test.skipRestarting=true \
    -Dmesh.test.jvmArgs="$jvm" "$@" || rc=$?
  exit $rc
fi
# The packages, installed, run and purged in a clean Debian container (package-test.sh, about a minute once its image
# is cached), from the jars this build makes: started, niced, as soon as both are written (failsafe's ITs on the fleet
# then run; they wait on cron minutes and sessions more than they compute), so that it adds little to the run.
started=$(date +%s)
work=$(mktemp -d)
(
  a=agent/target/mesh-agent.jar c=coordinator/target/mesh-coordinator.jar
  until [ -f "$work/verify-done" ]; do
    if [ -f "$a" ] && [ -f "$c" ] && [ "$(stat -c %Y "$a")" -ge "$started" ] && [ "$(stat -c %Y "$c")" -ge "$started" ] \
        && [ $(( $(date +%s) - $(stat -c %Y "$c") )) -ge 5 ]; then
      nice -n 10 bash deploy/dev/package-test.sh --no-build >"$work/package-test.log" 2>&1
      echo $? >"$work/package-test.rc"
      exit 0
    fi
    sleep 2
  done
) &
packages=$!
mvn -B ${MAVEN_ARGS:-} verify -Dmesh.test.jvmArgs="$jvm" "$@" || rc=$?
touch "$work/verify-done"
wait "$packages" || true
if [ -f "$work/package-test.rc" ]; then
  cat "$work/package-test.log"
  [ "$(cat "$work/package-test.rc")" = 0 ] || { [ "$rc" != 0 ] || rc=1; }
else
  echo "test.sh: the build made no jars: package-test.sh not run" >&2; [ "$rc" != 0 ] || rc=1
fi
rm -rf "$work"
# The ITs take the fleet down when they brought it up; a test JVM that died first leaves it up: take it down here,
# unless it was up before this run (an operator's fleet).
if [ "$fleet_was_up" = 0 ] && [ -f /run/mesh-fleet/env ]; then bash deploy/dev/fleet.sh down || true; fi
# The history checkers' verdicts (seed, operations, faults, violations) are in their test output files (surefire's for
# the one-engine checker, failsafe's for the fleet's FleetHistoryIT); show them here.
grep -h -E '^history: seed=.*violations=|^history (violation|tolerated|audit)' agent/target/surefire-reports/*-output.txt \
  coordinator/target/failsafe-reports/*-output.txt 2>/dev/null || true
exit $rc
