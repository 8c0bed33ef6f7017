#!/usr/bin/env bash
# The fleet's own demo (`bash deploy/dev/demo.sh --fleet`; root on Debian): the seed's store on the fleet of three
# Docker engines (deploy/dev/fleet.sh), on loopback:
#   - a push rolled out with a canary (module cache: rollout {canary: 1, max-parallel: 1});
#   - the store's registry on each engine, each with a garbage-collect window at the same cron minute, in the group
#     "registries" (max-concurrent 1): the three windows taken one at a time, the queue shown while they wait;
#   - a push during the windows: deferred on the host whose window is open, applied on the others, landing there
#     after its window with no new push;
#   - an image pushed into each registry before and pulled back whole after.
# The three engines share the machine's loopback, so each registry needs its own port: the store is one module per
# host (store-1..3 on 127.0.0.1:5001..5003), which the group limits together as it would one module on three hosts.
# Exits non-zero when any of that does not happen, naming it. Stops what it started: the fleet too, unless it was up
# before (then only its modules and images are removed).
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"

DEMO_NAME="FLEET DEMO"
source deploy/dev/lib.sh

say "Setting up: Java, Maven, the Docker engine, the demo images and the jars"
set_up

fleet_was_up=0; [ -f /run/mesh-fleet/env ] && fleet_was_up=1
state=$(mktemp -d /tmp/mesh-fleet-demo.XXXXXX)
MODULES="store-1 store-2 store-3 cache"
cleanup() {
  local rc=$?
  set +e
  say "Cleaning up"
  if [ -n "${MESH_COORDINATOR:-}" ]; then
    for m in $MODULES; do deploy/bin/mesh delete "$m" >/dev/null 2>&1; done
  fi
  if [ "$fleet_was_up" = 0 ]; then
    bash deploy/dev/fleet.sh down >/dev/null 2>&1
  else
    for i in 1 2 3; do
      sock=$(eval echo "\${MESH_FLEET_DOCKER_fleet_$i:-}"); [ -n "$sock" ] || continue
      DOCKER_HOST=$sock docker ps -aq --filter label=mesh.module | xargs -r env DOCKER_HOST="$sock" docker rm -f >/dev/null 2>&1
      DOCKER_HOST=$sock docker rmi "127.0.0.1:500$i/demo/busybox:1" >/dev/null 2>&1
    done
  fi
  rm -rf "$state"
  [ $rc -eq 0 ] && printf '\n\033[32mFLEET DEMO PASSED\033[0m\n'
  exit $rc
}
trap cleanup EXIT

say "Starting the fleet: three engines, a 3-server ZooKeeper ensemble, two coordinators, an agent per engine"
eval "$(bash deploy/dev/fleet.sh up 3)"
export MESH_COORDINATOR
echo "MESH_COORDINATOR=$MESH_COORDINATOR  MESH_ZK=$MESH_ZK  hosts: $MESH_FLEET_HOSTS"
engine() { eval echo "\$MESH_FLEET_DOCKER_fleet_$1"; }   # engine I -> its DOCKER_HOST
zkcli() { deploy/bin/zkcli --zk "$MESH_ZK" "$@" 2>/dev/null; }

# The windows' cron minute: the first whole minute at least 50 s ahead (the pushes and image pushes come first).
fire=$(date -u -d "@$(( ( $(date +%s) + 50 + 59 ) / 60 * 60 ))" +%s)
cron="$(date -u -d "@$fire" +'%-M %-H') * * *"
# network: host, which an agent refuses unless started with --allow-host-network, as fleet.sh starts them.
store() {  # store I LOG-LEVEL: the store module of host fleet-I, its registry on 127.0.0.1:500I
  cat <<EOF
module: store-$1
hosts: [fleet-$1]
containers:
  registry:
    image: mesh-demo/registry:2.8.2
    command: ["/bin/registry", "serve", "/etc/docker/registry/config.yml"]
    env:
      REGISTRY_HTTP_ADDR: "127.0.0.1:500$1"
      REGISTRY_STORAGE_DELETE_ENABLED: "true"
      REGISTRY_LOG_LEVEL: "$2"
    network: host
    volumes: ["store-data:/var/lib/registry"]
    stop-timeout: "5s"
schedules:
  garbage-collect:
    cron: "$cron"
    timezone: UTC
    group: registries          # the three stores' windows share one slot
    max-concurrent: 1
    start-by: 5m
    while-stopped: [registry]
    step:                      # waits 20 s first, standing in for a collection over a store of real size
      image: mesh-demo/registry:2.8.2
      command: ["/bin/sh", "-c", "sleep 20; exec /bin/registry garbage-collect --delete-untagged /etc/docker/registry/config.yml"]
      volumes-from: registry
    timeout: 5m
EOF
}
cache() {  # cache VERSION
  cat <<EOF
module: cache
hosts: ["*"]
rollout: {canary: 1, max-parallel: 1, on-failure: pause}
containers:
  app:
    image: mesh-demo/busybox:1
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
    env: {VERSION: "$1"}
    network: none
    stop-timeout: 2s
    healthcheck: {test: [CMD, "true"], interval: 1s, timeout: 1s, retries: 1}
    ready: {min-healthy: 1s}
EOF
}
{ store 1 info; echo ---; store 2 info; echo ---; store 3 info; echo ---; cache v1; } > "$state/r1.yaml"
{ store 1 debug; echo ---; store 2 debug; echo ---; store 3 debug; } > "$state/r2.yaml"
cache v2 > "$state/cache-v2.yaml"

say "Pushing the stores and the cache (r1); the windows fire at $(date -u -d "@$fire" +%H:%M:%S) UTC on every host"
deploy/bin/mesh push "$state/r1.yaml" --revision r1 --wait --timeout 3m || fail "r1 did not apply on every host"

say "A push rolled out with a canary: cache v2, one host first, then one at a time"
deploy/bin/mesh push "$state/cache-v2.yaml" --revision cache-v2 --wait --timeout 3m | tee "$state/cache-v2.out" \
  || fail "the cache rollout did not finish"
grep -q "rollout cache: done" "$state/cache-v2.out" || fail "push --wait did not show the rollout done"
deploy/bin/mesh rollout status cache
for i in 1 2 3; do
  DOCKER_HOST=$(engine $i) docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' cache-app | grep -qx VERSION=v2 \
    || fail "cache-app on fleet-$i does not run v2"
done

say "docker push: an image into each host's registry"
for i in 1 2 3; do
  wait_for 30 "the registry of fleet-$i answering" env DOCKER_HOST="$(engine $i)" docker run --rm --network host \
    mesh-demo/busybox:1 wget -q -O /dev/null "http://127.0.0.1:500$i/v2/"
  DOCKER_HOST=$(engine $i) docker tag mesh-demo/busybox:1 "127.0.0.1:500$i/demo/busybox:1"
  DOCKER_HOST=$(engine $i) docker push -q "127.0.0.1:500$i/demo/busybox:1" >/dev/null || fail "docker push into fleet-$i's registry"
  echo "fleet-$i: pushed 127.0.0.1:500$i/demo/busybox:1"
done
[ "$(date +%s)" -lt "$fire" ] || fail "the setup took past the windows' cron minute; run the demo again"

say "Waiting for the cron minute; then the three windows take the group's slot one at a time"
wait_for $(( fire - $(date +%s) + 30 )) "a garbage-collect window open" \
  sh -c "for i in 1 2 3; do deploy/bin/zkcli --zk $MESH_ZK stat /mesh/held/fleet-\$i/store-\$i-registry && exit 0; done; exit 1"
wait_for 10 "two windows in the queue" sh -c "deploy/bin/mesh windows | grep -q 'waits 2'"
deploy/bin/mesh windows | tee "$state/windows.out"
grep -q "group-registries" "$state/windows.out" || fail "mesh windows does not show the slot group-registries"
open=""
for i in 1 2 3; do zkcli stat "/mesh/held/fleet-$i/store-$i-registry" >/dev/null && open=$i; done
[ -n "$open" ] || fail "no window open after the queue was shown"
echo "the window of store-$open on fleet-$open is open; the other two wait for the slot"

say "While the window of fleet-$open is open: pushing r2 of the three stores (REGISTRY_LOG_LEVEL info -> debug)"
push_revision "$state/r2.yaml" r2 "$state/push-r2.out"; push2=$PUSH
wait_for 30 "store-$open deferred by its window" sh -c "deploy/bin/mesh status $push2 | grep 'store-$open' | grep -q deferred"
deploy/bin/mesh status "$push2" | tee "$state/status-r2.out"
for i in 1 2 3; do
  [ "$i" = "$open" ] && continue
  wait_for 30 "store-$i applied on fleet-$i (its window only waits: it holds nothing)" \
    sh -c "DOCKER_HOST=$(engine $i) docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' store-$i-registry | grep -qx REGISTRY_LOG_LEVEL=debug"
  echo "fleet-$i: store-$i-registry runs r2 while fleet-$open's window is open"
done

say "The three windows, one after another"
for i in 1 2 3; do
  wait_for 120 "the garbage-collect window of fleet-$i to end" \
    sh -c "deploy/bin/zkcli --zk $MESH_ZK get /mesh/reports/fleet-$i/store-$i 2>/dev/null | grep -q '\"lastWindow\":{'"
done
spans=""
for i in 1 2 3; do
  # From the engine's own events: the window's stop of the registry (the last before its step starts; an apply's
  # recreate of r2 may come first) and the registry's start after the step.
  ev=$(DOCKER_HOST=$(engine $i) docker events --since "$fire" --until "$(date +%s)" --filter "label=mesh.module=store-$i" \
        --format '{{.TimeNano}} {{.Action}} {{index .Actor.Attributes "name"}}')
  read -r stop start < <(echo "$ev" | awk -v reg="store-$i-registry" '
    $3==reg && ($2=="kill"||$2=="stop"||$2=="die") && !step { stop=$1 }
    $3 ~ /\.garbage-collect\./ && $2=="start" { step=1 }
    $3 ~ /\.garbage-collect\./ && $2=="die" { died=1 }
    died && $3==reg && $2=="start" { print stop, $1; exit }')
  [ -n "${stop:-}" ] && [ -n "${start:-}" ] || fail "no window (registry stop, step, registry start) on fleet-$i after the cron minute"
  window=$(zkcli get "/mesh/reports/fleet-$i/store-$i" | grep -o '"lastWindow":{[^}]*' | grep -o '"outcome":"[a-z-]*"')
  printf 'fleet-%s: registry stopped %s, started %s, window %s\n' "$i" "$(date -u -d "@${stop:0:10}" +%T)" \
    "$(date -u -d "@${start:0:10}" +%T)" "$window"
  [ "$window" = '"outcome":"succeeded"' ] || fail "the window of fleet-$i did not succeed: $window"
  spans+="$stop $start"$'\n'
done
echo "$spans" | sort -n | awk 'NF==2 { if (prev && $1 <= prev) bad=1; prev=$2 } END { exit bad }' \
  || fail "two windows had their registries stopped at the same time"
echo "no two registries were stopped at once (from each engine's events)"

say "r2 lands on fleet-$open after its window, with no new push"
wait_for 60 "$push2 applied everywhere" sh -c "deploy/bin/mesh status $push2 | grep -q '^$push2.*applied'"
deploy/bin/mesh status "$push2"
DOCKER_HOST=$(engine "$open") docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "store-$open-registry" \
  | grep -qx REGISTRY_LOG_LEVEL=debug || fail "store-$open-registry does not run r2"

say "The images pull back whole from each registry"
for i in 1 2 3; do
  wait_for 30 "the registry of fleet-$i answering" env DOCKER_HOST="$(engine $i)" docker run --rm --network host \
    mesh-demo/busybox:1 wget -q -O /dev/null "http://127.0.0.1:500$i/v2/"
  DOCKER_HOST=$(engine $i) docker rmi -f "127.0.0.1:500$i/demo/busybox:1" >/dev/null
  DOCKER_HOST=$(engine $i) docker pull -q "127.0.0.1:500$i/demo/busybox:1" >/dev/null || fail "the image did not pull back on fleet-$i"
  DOCKER_HOST=$(engine $i) docker run --rm --network none "127.0.0.1:500$i/demo/busybox:1" true || fail "the pulled image does not run on fleet-$i"
  echo "fleet-$i: pulled and ran 127.0.0.1:500$i/demo/busybox:1"
done

say "mesh audit: the proof, from each engine's own events in its agent's ledger"
deploy/bin/mesh audit --since 1h | tee "$state/audit.out" || fail "mesh audit found violations or gaps (exit $?)"
for i in 1 2 3; do # each host's section begins with its name at the start of a line
  awk -v h="fleet-$i" '/^[^ ]/ { in_h = ($1 == h) } in_h && /^  window  garbage-collect .* OK$/ { found=1 } END { exit !found }' \
    "$state/audit.out" || fail "mesh audit does not list fleet-$i's garbage-collect window as ok"
done
