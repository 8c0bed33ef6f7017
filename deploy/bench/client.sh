#!/usr/bin/env bash
# The client's cost (docs/benchmarks.md, "Client and jar sizes, issue 12"): the size of each shaded jar, and the wall
# time of `deploy/bin/mesh --help` and of `deploy/bin/mesh status` against a coordinator URL that refuses connections
# (127.0.0.1:1), RUNS times each (default 10), median and range. After a build (`mvn -B -q package -DskipTests`):
#
#   bash deploy/bench/client.sh                          # the built coordinator/target/mesh-coordinator.jar
#   bash deploy/bench/client.sh /tmp/old.jar JAR...      # several coordinator jars, interleaved run by run
#
# Needs nothing running; the load of a shared machine moves the absolute times, so compare jars in one run.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
runs=${RUNS:-10}
jars=("$@")
[ ${#jars[@]} -gt 0 ] || jars=("$repo/coordinator/target/mesh-coordinator.jar")
for j in "${jars[@]}" "$repo/agent/target/mesh-agent.jar"; do
  [ -f "$j" ] || { echo "client.sh: $j is missing: build with 'mvn -B -q package -DskipTests'" >&2; exit 1; }
  printf '%-60s %9d bytes, %5d classes\n' "$j" "$(stat -c %s "$j")" "$(unzip -Z1 "$j" | grep -c '\.class$')"
done

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }
stats() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "median %d ms (min %d, max %d, n=%d)", m, a[1], a[NR], NR}'; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq 1 "$runs"); do
  for i in "${!jars[@]}"; do
    MESH_COORDINATOR_JAR=${jars[$i]} ms "$repo/deploy/bin/mesh" --help >>"$work/help.$i"
    MESH_COORDINATOR_JAR=${jars[$i]} ms "$repo/deploy/bin/mesh" status --coordinator http://127.0.0.1:1 >>"$work/status.$i"
  done
done
for i in "${!jars[@]}"; do
  echo "${jars[$i]}"
  echo "  mesh --help:                      $(stats <"$work/help.$i")"
  echo "  mesh status (connection refused): $(stats <"$work/status.$i")"
done
echo "nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
