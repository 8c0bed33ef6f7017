#!/usr/bin/env bash
# The main job, end to end on one machine (root on Debian):
#   an embedded ZooKeeper with the coordinator, an agent for host-a; push the store; docker push an image into the
#   registry; open the garbage-collect window and, while it is open, push a changed store; show the push deferred
#   naming the window and the held znode as zkCli prints it; show the change landing after the window and the
#   image pulling back whole.
# Exits non-zero when any of that does not happen. Stops and removes everything it started (containers of module
# "store", the store-data volume, the processes, its state directory). Loopback only.
# --fleet: the fleet's own demo instead (deploy/dev/demo-fleet.sh: three engines, window slots, a canary rollout).
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
if [ "${1:-}" = "--fleet" ]; then exec bash deploy/dev/demo-fleet.sh; fi

ZK=127.0.0.1:2181
COORD=http://127.0.0.1:7070
REG=127.0.0.1:5000
HOST=host-a
export MESH_COORDINATOR=$COORD

source deploy/dev/lib.sh
port_free() { ! (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; }

say "Setting up: Java, Maven, the Docker engine and the demo images"
set_up
# Leftovers of an earlier run that could not clean up (its registry may hold 127.0.0.1:5000) go first.
leftover=$(docker ps -aq --filter label=mesh.module=store)
[ -z "$leftover" ] || { echo "removing containers of module store left by an earlier run: $leftover"; docker rm -f $leftover >/dev/null; }
docker volume rm store-data >/dev/null 2>&1 || true
for p in $ZK 127.0.0.1:7070 $REG; do port_free "$p" || fail "$p is in use: stop what listens there first"; done

state=$(mktemp -d /tmp/mesh-demo.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  set +e  # clean up as much as can be, whatever fails
  say "Cleaning up"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  docker ps -aq --filter label=mesh.module=store | xargs -r docker rm -f >/dev/null
  docker volume rm store-data >/dev/null 2>&1 || true
  docker rmi "$REG/demo/busybox:1" "$REG/demo/scratch:1" >/dev/null 2>&1 || true
  rm -rf "$state"
  [ $rc -eq 0 ] && printf '\n\033[32mDEMO PASSED\033[0m\n' || echo "logs were in $state (removed); rerun with MESH_DEMO_KEEP=1 to keep them"
  exit $rc
}
[ "${MESH_DEMO_KEEP:-}" = 1 ] && cleanup() { local rc=$?; for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; echo "kept $state"; exit $rc; }
trap cleanup EXIT

say "Starting the coordinator with an embedded ZooKeeper, and an agent for $HOST"
deploy/bin/mesh-coordinator serve --state-dir "$state/coordinator" >"$state/coordinator.log" 2>&1 & pids+=($!)
wait_for 60 "the coordinator's /healthz" deploy/bin/mesh status
grep -m1 -i "zookeeper" "$state/coordinator.log" || true
# --allow-host-network: the store's registry uses network: host (loopback only), which the agent refuses by default.
deploy/bin/mesh-agent run --host $HOST --zk $ZK --state-dir "$state/agent" --reconcile-interval 30s --allow-host-network \
  >"$state/agent.log" 2>&1 & pids+=($!)
wait_for 60 "the agent's /mesh/agents/$HOST node" deploy/bin/zkcli --zk $ZK stat /mesh/agents/$HOST

# The demo's store: deploy/examples/store.yaml, with a step that first waits 12 s, standing in for a collection
# over a store of real size (minutes), so that there is time to push during the window.
demo_store() {  # $1: the registry's log level (the change pushed mid-window)
  sed -e "s|      command: \[\"/bin/registry\", \"garbage-collect\"|      command: [\"/bin/sh\", \"-c\", \"sleep 12; exec /bin/registry garbage-collect --delete-untagged /etc/docker/registry/config.yml\"]\n      # was: [\"/bin/registry\", \"garbage-collect\"|" \
      -e "s|      REGISTRY_STORAGE_DELETE_ENABLED: \"true\".*|&\n      REGISTRY_LOG_LEVEL: \"$1\"|" deploy/examples/store.yaml
}
demo_store info > "$state/store-r1.yaml"
demo_store debug > "$state/store-r2.yaml"

say "Pushing the store (revision r1) and waiting for $HOST to apply it"
deploy/bin/mesh push "$state/store-r1.yaml" --revision r1 --wait --timeout 2m || fail "the first push did not apply"
wait_for 30 "the registry answering on $REG" docker run --rm --network host mesh-demo/busybox:1 wget -q -O /dev/null http://$REG/v2/
registry_id=$(docker inspect -f '{{.Id}}' store-registry)
echo "store-registry is ${registry_id:0:12}, running"

say "docker push: an image to keep, and one to delete so that garbage-collect has something to sweep"
docker tag mesh-demo/busybox:1 $REG/demo/busybox:1
docker push -q $REG/demo/busybox:1
docker tag mesh-demo/registry:2.8.2 $REG/demo/scratch:1
docker push -q $REG/demo/scratch:1
digest=$(docker run --rm --network host mesh-demo/busybox:1 wget -q -S -O /dev/null \
  --header 'Accept: application/vnd.docker.distribution.manifest.v2+json' http://$REG/v2/demo/scratch/manifests/1 2>&1 \
  | sed -n 's/.*Docker-Content-Digest: *//p' | tr -d '\r')
[ -n "$digest" ] || fail "could not read the digest of demo/scratch:1"
docker run --rm --network host mesh-demo/busybox:1 sh -c "printf 'DELETE /v2/demo/scratch/manifests/$digest HTTP/1.0\r\n\r\n' | nc 127.0.0.1 5000 | head -1" 2>/dev/null \
  || true
# busybox's wget cannot DELETE; the registry API call above goes through nc. Check it took:
docker run --rm --network host mesh-demo/busybox:1 wget -q -O /dev/null http://$REG/v2/demo/scratch/manifests/$digest 2>/dev/null \
  && fail "the demo/scratch manifest is still there after DELETE" || echo "deleted demo/scratch:1 ($digest)"

say "Opening the garbage-collect window (mesh-agent window, a second process)"
# Same --state-dir as the agent: on a real host both default to /var/lib/mesh/agent, where the window journals itself.
deploy/bin/mesh-agent window --host $HOST --zk $ZK --module store --schedule garbage-collect --state-dir "$state/agent" \
  >"$state/window.out" 2>"$state/window.log" & window_pid=$!; pids+=($window_pid)
wait_for 30 "the held znode /mesh/held/$HOST/store-registry" deploy/bin/zkcli --zk $ZK stat /mesh/held/$HOST/store-registry
wait_for 30 "store-registry stopped by the window" sh -c "[ \"\$(docker inspect -f '{{.State.Running}}' store-registry)\" = false ]"
echo "store-registry is stopped: held by the window, not broken"

say "While the window is open: pushing a changed store (revision r2: REGISTRY_LOG_LEVEL info -> debug)"
push_revision "$state/store-r2.yaml" r2 "$state/push-r2.out"; push2=$PUSH
wait_for 30 "$push2 deferred on $HOST" sh -c "deploy/bin/mesh status $push2 | grep -q deferred"
deploy/bin/mesh status "$push2"

say "The held znode, as zkCli prints it"
deploy/bin/zkcli --zk $ZK get /mesh/held/$HOST/store-registry 2>/dev/null | grep '^{' | tee "$state/held.json"
grep -q '"schedule":"garbage-collect"' "$state/held.json" || fail "the held znode does not name the garbage-collect window"
grep -q "\"containerId\":\"$registry_id\"" "$state/held.json" || fail "the held znode does not name store-registry's id"
echo; deploy/bin/mesh held
# Only while the window is still open: on a slow machine it may have ended (and given the registry back) by now.
if kill -0 $window_pid 2>/dev/null && deploy/bin/zkcli --zk $ZK stat /mesh/held/$HOST/store-registry >/dev/null 2>&1; then
  [ "$(docker inspect -f '{{.Id}} {{.State.Running}}' store-registry)" = "$registry_id false" ] \
    || fail "store-registry was touched during the window"
fi
echo "store-registry: same container, still stopped, while the push waits"

say "Waiting for the window to end"
wait "$window_pid" || { cat "$state/window.log" "$state/window.out" >&2; fail "the window failed"; }
grep '^{' "$state/window.out" | tail -1
grep -q 'blob eligible for deletion\|deleting blob' "$state/window.out" "$state/agent.log" "$state/window.log" 2>/dev/null \
  && echo "garbage-collect swept the deleted image's blobs" || true
deploy/bin/zkcli --zk $ZK stat /mesh/held/$HOST/store-registry >/dev/null 2>&1 && fail "the held znode outlived the window"
echo "held and window znodes are gone"

say "The change lands after the window, with no new push"
wait_for 60 "$push2 applied on $HOST" sh -c "deploy/bin/mesh status $push2 | grep -q applied"
deploy/bin/mesh status "$push2"
docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' store-registry | grep -qx 'REGISTRY_LOG_LEVEL=debug' \
  || fail "store-registry does not run revision r2"
deploy/bin/zkcli --zk $ZK get /mesh/reports/$HOST/store 2>/dev/null | grep '^{' | head -c 600; echo " ..."
wait_for 30 "the registry answering again" docker run --rm --network host mesh-demo/busybox:1 wget -q -O /dev/null http://$REG/v2/

say "The image kept in the store pulls back whole"
docker rmi -f $REG/demo/busybox:1 >/dev/null
docker pull -q $REG/demo/busybox:1 || fail "the image did not pull back from the store"
docker run --rm --network none $REG/demo/busybox:1 true || fail "the pulled image does not run"
echo "pulled and ran $REG/demo/busybox:1"

say "mesh audit: the proof, from the engine's own events in the agent's ledger"
deploy/bin/mesh audit --since 1h --module store | tee "$state/audit.out" || fail "mesh audit found violations or gaps (exit $?)"
grep -q "^  window  garbage-collect .*stops 1 starts 1  OK$" "$state/audit.out" \
  || fail "mesh audit does not list the garbage-collect window (one stop, one start) as ok"
