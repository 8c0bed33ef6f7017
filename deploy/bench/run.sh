#!/usr/bin/env bash
# mesh's benchmarks, B1–B14 (docs/benchmark-notes.md says what each measures), each against its floor measured in the same
# run (the plain docker-java and ZooKeeper clients doing the least work of the same contract) and docker-compose 1.29,
# in one bounded run (a watchdog stops it at 45 minutes). Root on Debian, from a clone:
#
#   bash deploy/bench/run.sh            # everything, then writes docs/benchmarks.md
#
# It sets up what it needs: Java 17 and Maven (deploy/dev/java.sh), the Docker engine and the mesh-demo images
# (deploy/dev/docker-engine.sh), Debian's docker-compose and curl when missing; builds the jars (reactor build, no install);
# starts a 3-server ZooKeeper ensemble on loopback in its own JVM; for B12 a fleet of 5 engines (deploy/dev/fleet.sh
# up 5, taken down after unless one was up before). Everything it starts is stopped on exit; the containers it creates
# carry mesh.module labels starting with "bench-" and are removed, compose projects downed.
# Environment: MAVEN_ARGS (e.g. -o), BENCH_OUT (default docs/benchmarks.md).
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
log() { echo "bench: $*" >&2; }
out=${BENCH_OUT:-docs/benchmarks.md}
work=$(mktemp -d /tmp/mesh-bench.XXXXXX)
pids=()
fleet_started=no  # B12 takes down the fleet it brought up, also when interrupted

cleanup() {
  set +e
  # the watchdog's sleep first: killing the watchdog's shell alone would leave it behind
  for c in $(cat /proc/"$watchdog"/task/*/children 2>/dev/null); do kill "$c" 2>/dev/null; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  # Containers of bench modules (the benches remove theirs; this catches an interrupted run).
  ids=$(docker ps -a --filter label=mesh.module --format '{{.ID}} {{.Label "mesh.module"}}' 2>/dev/null | awk '$2 ~ /^bench-/ {print $1}')
  [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1
  [ "$fleet_started" = yes ] && bash deploy/dev/fleet.sh down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# A watchdog: the whole run stops by itself at 45 minutes, about the sum of the benches' own bounds (at 17 minutes it
# stopped the run in B14 on a loaded machine).
( sleep 2700; log "watchdog: 45 minutes, stopping"; kill -TERM $$ ) 2>/dev/null &
watchdog=$!
pids+=("$watchdog")

bash deploy/dev/java.sh
bash deploy/dev/docker-engine.sh
missing=()
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)  # B1 and B2's comparison
command -v curl >/dev/null 2>&1 || missing+=(curl)                      # B9's floor
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

log "building (reactor, tests skipped)"
mvn -B -q ${MAVEN_ARGS:-} package -DskipTests dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$work/deps.txt" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
# The last module written is the coordinator's: its test classpath holds the agent's jars and test jar too.
cp="coordinator/target/test-classes:coordinator/target/classes:$(cat "$work/deps.txt")"
java_bin=$(command -v java)
results="$work/results.properties"
machine="$work/machine.properties"

{
  echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- wire agent coordinator deploy 2>/dev/null || echo ' (with local changes)')"
  echo "nproc=$(nproc)"
  echo "memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
  echo "kernel=$(uname -r)"
  echo "java=$(java -version 2>&1 | head -1 | sed 's/"//g')"
  echo "docker=engine $(docker version --format '{{.Server.Version}}' 2>/dev/null), API $(docker version --format '{{.Server.APIVersion}}' 2>/dev/null)"
  echo "compose=$(docker-compose version --short 2>/dev/null || docker-compose version | head -1)"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at start)"
} >"$machine"

log "starting a 3-server ZooKeeper ensemble"
mkfifo "$work/zk.in"
sleep 100000 >"$work/zk.in" &
pids+=("$!")
# mntr and srvr: B5 counts the requests of an apply with them
"$java_bin" -Xmx1g -Dzookeeper.4lw.commands.whitelist=mntr,srvr -cp "$cp" io.mesh.bench.ZkEnsemble "$work/zk.properties" \
  <"$work/zk.in" >"$work/zk.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 60); do [ -f "$work/zk.properties" ] && break; sleep 1; done
[ -f "$work/zk.properties" ] || { log "the ensemble did not start; see $work/zk.log"; tail -20 "$work/zk.log" >&2; exit 1; }
zk_all=$(grep '^all=' "$work/zk.properties" | cut -d= -f2)

bench() {  # bench NAME SECONDS CLASS ARGS...: one bench in its own JVM (heap BENCH_XMX, default 1g), bounded
  local name=$1 secs=$2; shift 2
  log "$name"
  local start=$SECONDS
  if ! timeout --kill-after=10 "$secs" "$java_bin" -Xmx"${BENCH_XMX:-1g}" -cp "$cp" "$@" >>"$work/$name.out" 2>"$work/$name.log"; then
    log "$name failed or ran out of time ($secs s); its figures are missing; last lines:"
    grep -v ' INFO ' "$work/$name.log" | tail -8 >&2
  fi
  log "$name: $((SECONDS - start)) s"
}

docker_up() { timeout 10 docker version >/dev/null 2>&1 || bash deploy/dev/docker-engine.sh; }

docker_up
# B13's cost in the same run as B1 and B2: the same applies with the ledger switched on and off, interleaved.
bench "B1-B2" 360 io.mesh.bench.ApplyBench --zk "$zk_all" --results "$results" --b1-rounds 6 --b1-per-round 10 --b2-rounds 3 \
  --only b1,b2,b13 --b13-rounds 5
bench "B13-disk" 60 io.mesh.bench.LedgerDiskBench --results "$results" --lines 10000
bench "B3" 80 io.mesh.bench.LockBench --zk-file "$work/zk.properties" --results "$results" --seconds 5 --phases 2
MESH_LOG_LEVEL=WARN bench "B4" 90 io.mesh.bench.HeldVisibilityBench --zk-file "$work/zk.properties" --results "$results" --iterations 400
# B4 after a quiet spell, as a cron window comes: a second ensemble whose container manager looks every 100 ms
# (ZooKeeper's default is 60 s), and a 400 ms pause before each window.
log "starting a second ensemble, container manager every 100 ms (B4 after a quiet spell)"
mkfifo "$work/zkq.in"
sleep 100000 >"$work/zkq.in" &
zkq_hold=$!
pids+=("$zkq_hold")
"$java_bin" -Xmx512m -Dznode.container.checkIntervalMs=100 -cp "$cp" io.mesh.bench.ZkEnsemble "$work/zkq.properties" \
  <"$work/zkq.in" >"$work/zkq.log" 2>&1 &
zkq=$!
pids+=("$zkq")
for _ in $(seq 1 60); do [ -f "$work/zkq.properties" ] && break; sleep 1; done
if [ -f "$work/zkq.properties" ]; then
  MESH_LOG_LEVEL=WARN bench "B4-quiet" 60 io.mesh.bench.HeldVisibilityBench --zk-file "$work/zkq.properties" --results "$results" \
    --iterations 60 --pause-ms 400 --prefix b4q
else
  log "the second ensemble did not start; B4 after a quiet spell is missing"
fi
kill "$zkq" "$zkq_hold" 2>/dev/null || true
# B5: mesh's simulated hosts and the floor's plain ZooKeeper hosts up together, pushes alternating; a warm-up push and
# one measured push per side and size; 12 minutes, most of them the 1,000 hosts (mesh's 10,000 applies at about 7 ms of CPU each on 2 cores).
bench "B5" 720 io.mesh.bench.FanoutBench --zk-file "$work/zk.properties" --results "$results" --hosts 100,300,1000 --pushes 1 --per-jvm 250 --wait-s 300
bench "B7" 150 io.mesh.bench.StatusBench --results "$results" --hosts 100,1000
# B14: mesh audit --since 24h over 100 simulated hosts' ledgers of a day, against the ensemble.
MESH_LOG_LEVEL=WARN bench "B14" 180 io.mesh.bench.AuditBench --zk-file "$work/zk.properties" --results "$results" --hosts 100 --modules 10 \
  --rounds 5 --http true
bench "B10" 150 io.mesh.bench.RolloutBench --zk-file "$work/zk.properties" --results "$results" --hosts 100 --max-parallel 10 --wait-s 120
docker_up
bench "B6-plain" 60 io.mesh.bench.AgentFootprintBench --zk-file "$work/zk.properties" --results "$results" \
  --launcher deploy/bin/mesh-agent --jar agent/target/mesh-agent.jar --plain true --prefix b6plain --launches 3 --settle-s 5 --idle-s 10
bench "B6" 90 io.mesh.bench.AgentFootprintBench --zk-file "$work/zk.properties" --results "$results" \
  --launcher deploy/bin/mesh-agent --jar agent/target/mesh-agent.jar --launches 4 --settle-s 10 --idle-s 20
# B9: the client's whole process against a coordinator on the ensemble; its class-data archive is made first, in a
# cache of its own (that first use is printed apart).
bench "B9" 90 io.mesh.bench.ClientBench --zk-file "$work/zk.properties" --results "$results" \
  --launcher deploy/bin/mesh --jar coordinator/target/mesh-coordinator.jar --runs 20 --hosts 10
bench "B8" 90 io.mesh.bench.AgentIdleBench --zk-file "$work/zk.properties" --results "$results" \
  --launcher deploy/bin/mesh-agent --jar agent/target/mesh-agent.jar --modules 10 --settle-s 15

# B11: the coordinator (in the bench's JVM, at the target's heap) and an ensemble of its own at 10,000 hosts.
MESH_LOG_LEVEL=WARN BENCH_XMX=512m bench "B11" 600 io.mesh.bench.ScaleBench --results "$results" --hosts 10000 --requests 30
# B12: a fleet of 5 real engines, after everything that uses the default engine (fleet.sh keeps one fleet a machine).
[ -f /run/mesh-fleet/env ] || fleet_started=yes
log "B12: bringing up a fleet of 5 engines (deploy/dev/fleet.sh up 5)"
if timeout 600 bash deploy/dev/fleet.sh up 5 >"$work/fleet.log" 2>&1; then
  bench "B12" 300 io.mesh.bench.FleetBench --results "$results" --env /run/mesh-fleet/env --containers 4 --rounds 5 --wait-s 120
  if [ "$fleet_started" = yes ]; then
    bash deploy/dev/fleet.sh down >>"$work/fleet.log" 2>&1 || log "fleet.sh down failed: see $work/fleet.log"
    fleet_started=no
  fi
else
  log "the fleet did not come up: B12 is missing; last lines:"
  tail -8 "$work/fleet.log" >&2
fi

"$java_bin" -cp "$cp" -Dbench.notes=docs/benchmark-notes.md io.mesh.bench.BenchReport --results "$results" --machine "$machine" \
  --before deploy/bench/before.properties,deploy/bench/before-8320b44.properties,deploy/bench/before-33feb8a.properties \
  --before-rows deploy/bench/before-rows.properties --out "$out"
log "wrote $out ($SECONDS s in all)"
cat "$results"
true  # the watchdog goes with the rest in cleanup
