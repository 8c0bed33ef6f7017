#!/usr/bin/env bash
# A real mesh fleet on one machine, on loopback (SPEC.md, "Fleet on one machine"), for multi-host tests and demos.
#
#   fleet.sh up [N] [--tls]    start what is missing of an N-host fleet (default 3; idempotent), print the env;
#                              --tls: all TLS (below); an `up` of the other mode switches a fleet that is up
#   fleet.sh down              stop everything, remove the engines' containers and volumes (idempotent)
#   fleet.sh status            each process: pid, up/down, answering or not
#   fleet.sh env               print /run/mesh-fleet/env
#   fleet.sh stop-agent I [--kill]     fleet.sh start-agent I [--clock +5m] [--jar FILE (another version's agent)]
#   fleet.sh stop-engine I [--kill]    fleet.sh start-engine I    fleet.sh restart-engine I
#   fleet.sh stop-zk J [--kill]        fleet.sh start-zk J        (J = 1..3)
#   fleet.sh stop-coordinator K [--kill]   fleet.sh start-coordinator K   (K = 1..2)
#
# What `up N` starts (every process detached with setsid, so it outlives this script):
#   - N Docker engines fleet-1..fleet-N: dockerd with its own socket unix:///run/mesh-fleet/fleet-<i>/docker.sock,
#     --data-root /var/lib/mesh-fleet/fleet-<i>, --exec-root /run/mesh-fleet/fleet-<i>/exec, its own containerd
#     (dockerd starts one under its exec root when no system containerd runs), --bridge=none --iptables=false, and
#     the demo images mesh-demo/busybox:1 and mesh-demo/registry:2.8.2, saved once from the default engine
#     (deploy/dev/docker-engine.sh makes them) into /var/cache/mesh-fleet and loaded into each engine;
#   - a 3-server ZooKeeper ensemble (QuorumPeerMain from the agent jar): clients on 127.0.0.1:2281-2283, quorum on
#     127.0.0.1:22881-22883, election on 127.0.0.1:23881-23883, data in /var/lib/mesh-fleet/zk-<j>;
#   - two coordinators on http://127.0.0.1:7171 and http://127.0.0.1:7172;
#   - one agent per engine: --host fleet-<i>, --state-dir /run/mesh-fleet/fleet-<i>/agent.
# Then it prints the export lines of SPEC (MESH_ZK, MESH_COORDINATOR, MESH_FLEET_HOSTS, MESH_FLEET_DOCKER_fleet_<i>,
# MESH_FLEET_STATE_fleet_<i>) on stdout and writes them to /run/mesh-fleet/env: eval "$(deploy/dev/fleet.sh up)".
# Progress goes to stderr.
#
# All TLS (`up --tls`; docs/decisions/0040-tls.md): the setup makes a CA and one certificate for 127.0.0.1 and
# localhost (server and client use) with openssl, in /run/mesh-fleet/tls/ (ca.pem, fleet.pem, fleet.key; 30 days,
# made again with less than a day left);
# ZooKeeper serves only its secureClientPort (the same ports, Netty, client certificates required), coordinators
# serve only HTTPS (https://127.0.0.1:7171, :7172), and agents, coordinators and zkcli take --zk-tls
# /run/mesh-fleet/tls/zk-client.properties. The env adds MESH_CA and MESH_ZK_TLS, which mesh and zkcli read. The
# engines are kept when an `up` switches modes; ZooKeeper (its data kept), the coordinators and the agents restart.
# Later one-part starts (start-agent, start-zk, ...) keep the mode, which /run/mesh-fleet/mode records.
#
# Pid files (a nemesis signals these; a pid is trusted only while that process's command line still names its
# fleet role, so a reused pid is never signalled):
#   /run/mesh-fleet/fleet-<i>/dockerd.pid    engine i's dockerd (its own containerd is its child and dies with it)
#   /run/mesh-fleet/fleet-<i>/agent.pid      agent of host fleet-<i> (the agent's JVM)
#   /run/mesh-fleet/zk-<j>.pid               ZooKeeper server j (its JVM; zoo.cfg in /run/mesh-fleet/zk-<j>/)
#   /run/mesh-fleet/coordinator-<k>.pid      coordinator k (its JVM), port 717<k>
# Logs: /run/mesh-fleet/logs/{fleet-<i>-dockerd,fleet-<i>-agent,zk-<j>,coordinator-<k>}.log (appended, kept by down).
#
# Agents and coordinators run copies of this checkout's jars, /run/mesh-fleet/jars/mesh-*-<sha>.jar (a `mvn package`
# rewriting target/*.jar under a running JVM can crash it); `up` builds the jars when they are missing and restarts
# an agent or coordinator that runs other jars than this checkout's, so the fleet runs the code under test.
# ZooKeeper servers and engines are kept as they are.
#
# `down` stops agents, coordinators, engines (after removing their containers and volumes) and ZooKeeper, then
# removes ZooKeeper's data, the agents' state dirs and the jar copies, so that the next `up` starts clean; engines'
# data roots (the loaded images) and the logs are kept. Nothing listens beyond 127.0.0.1: no bridge, no iptables,
# no ZooKeeper admin server. One fleet per machine: fleet.sh serialises its own runs with a lock file (a single-part
# start lets it go once the part is launched, while it waits for the part to answer, so that parts start in parallel).
# Environment: MESH_FLEET_RECONCILE (agents' --reconcile-interval, default 10s), MESH_FLEET_WAIT (seconds each
# readiness wait may take, default 90).
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)

RUN=/run/mesh-fleet                  # sockets, pid files, env, exec roots, agents' state: gone at reboot like them
LIB=/var/lib/mesh-fleet              # engines' data roots (images) and ZooKeeper's data
CACHE=/var/cache/mesh-fleet          # the demo images as one tar, made once from the default engine
LOGS=$RUN/logs
ZK_CONNECT=127.0.0.1:2281,127.0.0.1:2282,127.0.0.1:2283
COORDINATORS=2
IMAGES=(mesh-demo/busybox:1 mesh-demo/registry:2.8.2)
WAIT=${MESH_FLEET_WAIT:-90}
# A short reconcile so that a fleet under faults (a restarted dockerd, a container killed behind mesh's back)
# converges in seconds, not a minute; a no-op reconcile is one Docker list (docs/decisions/0004-no-op-reconcile.md).
RECONCILE=${MESH_FLEET_RECONCILE:-10s}
# Small heaps: 3 ZooKeeper servers, 2 coordinators and N agents share a 2-core test machine.
ZK_JAVA_OPTS="-Xmx160m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
COORDINATOR_JAVA_OPTS="-Xmx256m -XX:+UseSerialGC"
AGENT_JAVA_OPTS="-Xmx256m"

log() { echo "fleet: [${SECONDS}s] $*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------------------------------------------------------
# Processes. A pid file alone is not trusted: the pid may be reused after a kill -9. A process is ours while its
# command line holds the marker of its role (" --pidfile <file> " for dockerd, " <zoo.cfg> " for a ZooKeeper
# server, " --state-dir <dir> " for agents and coordinators). A zombie has an empty command line: not running.

cmdline() { { printf ' %s' "$(tr '\0' ' ' < "/proc/$1/cmdline")"; } 2>/dev/null || true; }

# running PIDFILE MARKER: true when the pid file names a live process whose command line holds MARKER.
running() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ "$(cmdline "$pid")" == *"$2"* ]]
}

pid_of() { cat "$1" 2>/dev/null || echo -; }

# stop PIDFILE MARKER NAME SECONDS [--kill]: SIGTERM (or SIGKILL at once with --kill), SIGKILL after SECONDS, wait.
# A stopped (SIGSTOP) process is continued first, or it would never act on SIGTERM.
stop() {
  local file=$1 marker=$2 name=$3 secs=$4 how=${5:-} pid
  if running "$file" "$marker"; then
    pid=$(cat "$file")
    kill -CONT "$pid" 2>/dev/null || true
    if [ "$how" = --kill ]; then kill -KILL "$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
    local t=0
    while running "$file" "$marker" && [ "$t" -lt $((secs * 5)) ]; do sleep 0.2; t=$((t + 1)); done
    if running "$file" "$marker"; then
      log "$name (pid $pid) still runs ${secs}s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      t=0; while running "$file" "$marker" && [ "$t" -lt 50 ]; do sleep 0.2; t=$((t + 1)); done
    fi
    log "$name stopped (pid $pid)"
  fi
  rm -f "$file"
}

# stop_stale PIDFILE MARKER NAME SECONDS JAR: stops a running agent or coordinator whose command line does not name
# JAR (it runs other jars than this checkout's: started before a rebuild, or from another checkout), so that its
# start function starts it again on this checkout's jars.
stop_stale() {
  local file=$1 marker=$2 name=$3 secs=$4 jar=$5
  running "$file" "$marker" && [[ "$(cmdline "$(cat "$file")")" != *" $jar "* ]] || return 0
  log "$name runs other jars than $repo's: restarting it"
  stop "$file" "$marker" "$name" "$secs"
}

# launch LOG PIDFILE CMD...: detached (setsid: own session, so it outlives this script and its process group),
# stdin from /dev/null, output appended to LOG, fd 9 (the fleet lock) closed so that it does not hold the lock.
# setsid does not fork here (a background job is not a group leader) and the launchers exec java: $! is the JVM.
launch() {
  local logf=$1 pidf=$2; shift 2
  echo "--- $(date -u +%FT%TZ) fleet.sh: $*" >>"$logf"
  setsid "$@" >>"$logf" 2>&1 </dev/null 9>&- &
  echo $! > "$pidf"
}

# wait_until SECONDS WHAT CMD...: polls CMD every half second; fails naming WHAT after SECONDS.
wait_until() {
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || { log "$what: not within ${secs}s"; return 1; }
    sleep 0.5
  done
}

http_get() { curl -fsS --max-time 5 ${TLS_ON:+--cacert "$TLS_DIR/ca.pem"} "$1" 2>/dev/null; }

# ---------------------------------------------------------------------------------------------------------------
# TLS (`up --tls`): the mode the running parts were started in, and the certificates the setup makes.

TLS_DIR=$RUN/tls
TLS_ON=""                                         # non-empty in a TLS fleet (set by load_mode)
load_mode() { TLS_ON=""; [ "$(cat "$RUN/mode" 2>/dev/null)" = tls ] && TLS_ON=1 || true; }
scheme() { [ -n "$TLS_ON" ] && echo https || echo http; }
# Arguments of every ZooKeeper client of a TLS fleet (agents, coordinators, zkcli).
zk_tls_args() { [ -n "$TLS_ON" ] && printf '%s\n' --zk-tls "$TLS_DIR/zk-client.properties" || true; }

# The fleet's CA and its one certificate (server and client use, 127.0.0.1 and localhost), for 30 days; kept while
# they last one more day (longer than any run), else made again, and CERTS_MADE says so: parts that run with the old
# ones are restarted by `up`. PEM, the key unencrypted (BEGIN PRIVATE KEY): ZooKeeper's PEM stores and mesh read it.
CERTS_MADE=""
make_certs() {
  if [ -f "$TLS_DIR/fleet.pem" ] && openssl x509 -in "$TLS_DIR/fleet.pem" -noout -checkend 86400 >/dev/null 2>&1; then return 0; fi
  command -v openssl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
  rm -rf "$TLS_DIR"; mkdir -p "$TLS_DIR"; chmod 700 "$TLS_DIR"
  local mask; mask=$(umask); umask 077
  CERTS_MADE=1
  printf '[req]\ndistinguished_name=dn\n[dn]\n' > "$TLS_DIR/req.cnf"
  openssl req -config "$TLS_DIR/req.cnf" -x509 -newkey rsa:2048 -nodes -keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.pem" \
    -days 30 -subj /CN=mesh-fleet-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    2>/dev/null || die "openssl could not make the fleet's CA"
  openssl req -config "$TLS_DIR/req.cnf" -x509 -newkey rsa:2048 -nodes -keyout "$TLS_DIR/fleet.key" -out "$TLS_DIR/fleet.pem" \
    -days 30 -subj /CN=mesh-fleet -addext subjectAltName=IP:127.0.0.1,DNS:localhost -addext basicConstraints=critical,CA:FALSE \
    -addext extendedKeyUsage=serverAuth,clientAuth -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" \
    2>/dev/null || die "openssl could not make the fleet's certificate"
  # ZooKeeper's PEM key store: the certificate and its key in one file
  cat "$TLS_DIR/fleet.pem" "$TLS_DIR/fleet.key" > "$TLS_DIR/zk-keystore.pem"
  cat > "$TLS_DIR/zk-client.properties" <<PROPS
# ZooKeeper's client TLS properties of the fleet (deploy/dev/fleet.sh up --tls): --zk-tls FILE, MESH_ZK_TLS
zookeeper.client.secure=true
zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty
zookeeper.ssl.keyStore.location=$TLS_DIR/zk-keystore.pem
zookeeper.ssl.keyStore.type=PEM
zookeeper.ssl.trustStore.location=$TLS_DIR/ca.pem
zookeeper.ssl.trustStore.type=PEM
PROPS
  rm -f "$TLS_DIR/req.cnf"
  umask "$mask"
  log "tls: made the fleet's CA and certificate in $TLS_DIR"
}

# ---------------------------------------------------------------------------------------------------------------
# Jars: this checkout's, copied under a name of their content so that a rebuild never changes a running JVM's jar.

jar_copy=()  # [0] agent jar copy, [1] coordinator jar copy

jars() {
  local agent=$repo/agent/target/mesh-agent.jar coordinator=$repo/coordinator/target/mesh-coordinator.jar
  if [ ! -f "$agent" ] || [ ! -f "$coordinator" ]; then
    log "building the jars (mvn -B -q package -DskipTests in $repo)"
    (cd "$repo" && mvn -B -q package -DskipTests) >&2 || die "the build failed"
  fi
  mkdir -p "$RUN/jars"
  local f sum dst
  jar_copy=()
  for f in "$agent" "$coordinator"; do
    sum=$(sha256sum "$f" | cut -c1-16)
    dst=$RUN/jars/$(basename "$f" .jar)-$sum.jar
    [ -f "$dst" ] || { cp "$f" "$dst.tmp" && mv "$dst.tmp" "$dst"; }
    jar_copy+=("$dst")
  done
}

# ---------------------------------------------------------------------------------------------------------------
# Engines.

sock() { echo "unix://$RUN/fleet-$1/docker.sock"; }
dockerd_marker() { echo " --pidfile $RUN/fleet-$1/dockerd.pid "; }
dk() { local i=$1; shift; timeout 120 docker -H "$(sock "$i")" "$@"; }
engine_answers() { timeout 10 docker -H "$(sock "$1")" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# What engine i leaves running when its dockerd is killed with SIGKILL: its containerd dies with it, but the
# containerd-shim of each container keeps the container running (a dockerd started again takes them back).
engine_leftovers() { pgrep -f -- " -address $RUN/fleet-$1/exec/containerd/containerd.sock" >/dev/null; }

start_engine() {
  local i=$1 d=$RUN/fleet-$1
  engine_answers "$i" && return 0
  if ! running "$d/dockerd.pid" "$(dockerd_marker "$i")"; then
    mkdir -p "$d/exec" "$LIB/fleet-$i" "$LOGS"
    rm -f "$d/dockerd.pid"  # stale: dockerd refuses to start over a pid file naming a live process
    # An empty config file of its own: the machine's /etc/docker/daemon.json (hosts, data-root...) must not apply.
    echo '{}' > "$d/daemon.json"
    log "fleet-$i: starting dockerd on $(sock "$i")"
    # --containerd-namespace: should a system containerd run (then dockerd uses it instead of its own), each engine
    # keeps its containers in its own namespace instead of sharing "moby" with the default engine.
    launch "$LOGS/fleet-$i-dockerd.log" "$d/dockerd.pid.launch" \
      dockerd --host "$(sock "$i")" --config-file "$d/daemon.json" \
        --data-root "$LIB/fleet-$i" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" \
        --bridge=none --iptables=false --ip6tables=false \
        --containerd-namespace "mesh-fleet-$i" --containerd-plugins-namespace "mesh-fleet-$i-plugins" \
        --label "mesh.fleet.host=fleet-$i"
    rm -f "$d/dockerd.pid.launch"  # dockerd writes its own pid file (--pidfile)
  fi
}

await_engine() {
  local i=$1
  wait_until "$WAIT" "fleet-$i: dockerd answering on $(sock "$i")" engine_answers "$i" || {
    tail -20 "$LOGS/fleet-$i-dockerd.log" >&2; return 1; }
}

# The demo images' ids in the default engine, one line each (docker-engine.sh made them there).
image_ids() { docker image inspect -f '{{.Id}}' "${IMAGES[@]}"; }

# The demo images as one tar, saved from the default engine; named by the images' ids, so that images rebuilt by
# docker-engine.sh make a new tar instead of loading stale ones.
image_tar() {
  local tar
  tar=$CACHE/images-$(image_ids | cut -d: -f2 | cut -c1-12 | paste -sd-).tar
  if [ ! -f "$tar" ]; then
    mkdir -p "$CACHE"
    rm -f "$CACHE"/images-*.tar
    log "saving ${IMAGES[*]} from the default engine into $tar"
    docker save -o "$tar.tmp" "${IMAGES[@]}" && mv "$tar.tmp" "$tar"
  fi
  echo "$tar"
}

# Loads the demo images into engine i unless it has them, with the default engine's ids. WANT: image_ids' output.
load_images() {
  local i=$1 want=$2
  if [ "$(dk "$i" image inspect -f '{{.Id}}' "${IMAGES[@]}" 2>/dev/null || true)" != "$want" ]; then
    log "fleet-$i: loading ${IMAGES[*]}"
    dk "$i" load -q -i "$(image_tar)" >/dev/null
  fi
}

# Removes every container and unused volume of engine i (the engine must answer).
clean_engine() {
  local i=$1 ids
  ids=$(dk "$i" ps -aq || true)
  if [ -n "$ids" ]; then
    log "fleet-$i: removing $(echo "$ids" | wc -w) container(s)"
    # shellcheck disable=SC2086 # one id per word
    dk "$i" rm -f -v $ids >/dev/null || true
  fi
  dk "$i" volume prune -f >/dev/null || true
}

# Unmounts what a stopped engine i left mounted under its data root and exec root. A dockerd killed with SIGKILL
# leaves its data root bind-mounted on itself (and maybe a netns under its exec root); a dockerd stopped while it was
# stopping a container under load can leave that container's overlay mounted beneath its data root's bind mount,
# out of its own sight, held by an orphaned containerd shim (seen with restart-engine under a nemesis: the container
# then stays "Removal In Progress", its removal failing with EBUSY, until the mount goes). Only once nothing of the
# engine runs any more.
# any_alive PID...: true while one of them runs (not gone, not a zombie).
any_alive() {
  local p
  for p in "$@"; do
    [ -d "/proc/$p" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && return 0
  done
  return 1
}

clear_mounts() {
  local i=$1 m p stale=""
  # A shim with no process under it belongs to a container started while dockerd was shutting down (its containerd
  # died under it): nothing runs there, but it keeps that container's root filesystem mounted.
  for p in $(pgrep -f -- " -address $RUN/fleet-$i/exec/containerd/containerd.sock" || true); do
    [ -n "$(pgrep -P "$p" || true)" ] || stale+=" $p"
  done
  if [ -n "$stale" ]; then
    log "fleet-$i: killing containerd shims with no container process left:$stale"
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $stale 2>/dev/null || true
    local t=0
    # shellcheck disable=SC2086 # one pid per word
    while [ "$t" -lt 25 ] && any_alive $stale; do sleep 0.2; t=$((t + 1)); done
  fi
  engine_leftovers "$i" && { log "fleet-$i: containers of the stopped dockerd still run: its mounts are kept"; return 0; }
  for m in $(awk -v a="$LIB/fleet-$i" -v b="$RUN/fleet-$i/" '$2 == a || index($2, a "/") == 1 || index($2, b) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

# Kills what runs under engine i's containerd without a record in its dockerd (a container started while dockerd
# was shutting down, seen under a nemesis: its process runs on, invisible to the Docker API, and its shim keeps its
# root filesystem mounted). The engine must answer.
reap_ghosts() {
  local i=$1 known p id
  known=$(dk "$i" ps -aq --no-trunc 2>/dev/null) || return 0
  for p in $(pgrep -f -- " -address $RUN/fleet-$i/exec/containerd/containerd.sock" || true); do
    id=$(tr '\0' '\n' < "/proc/$p/cmdline" 2>/dev/null | awk 'f { print; exit } $0 == "-id" { f = 1 }')
    [ -n "$id" ] && ! grep -qx "$id" <<<"$known" || continue
    log "fleet-$i: container ${id:0:12} runs with no record in its dockerd (started as it shut down): killing it"
    pkill -KILL -P "$p" 2>/dev/null || true
    kill -KILL "$p" 2>/dev/null || true
  done
}

# Stops engine i's dockerd, keeping its containers (they stop with it, and Docker's restart policies apply when it
# starts again: a real dockerd restart). With --kill: SIGKILL, as a crash: its containerd dies
# with it, its containers keep running under their shims until a dockerd started again takes them back.
stop_engine() {
  local i=$1 how=${2:-}
  # dockerd stops its containers within their stop timeouts (at most --shutdown-timeout, 15 s) before it exits.
  stop "$RUN/fleet-$i/dockerd.pid" "$(dockerd_marker "$i")" "fleet-$i dockerd" 60 "$how"
}

# ---------------------------------------------------------------------------------------------------------------
# ZooKeeper.

zk_cfg() { echo "$RUN/zk-$1/zoo.cfg"; }
zk_marker() { echo " $(zk_cfg "$1") "; }
zk_running() { running "$RUN/zk-$1.pid" "$(zk_marker "$1")"; }
# A four-letter word over bash's /dev/tcp (over openssl s_client in a TLS fleet), bounded; empty when the server
# does not answer.
fourlw() {
  if [ -n "$TLS_ON" ]; then
    printf '%s' "$2" | timeout 3 openssl s_client -connect "127.0.0.1:$((2280 + $1))" -quiet -verify_return_error \
      -CAfile "$TLS_DIR/ca.pem" -cert "$TLS_DIR/fleet.pem" -key "$TLS_DIR/fleet.key" 2>/dev/null || true
  else
    timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((2280 + $1)); printf '%s' '$2' >&3; cat <&3" 2>/dev/null || true
  fi
}
zk_mode() { fourlw "$1" srvr | sed -n 's/^Mode: //p'; }

start_zk() {
  local j=$1
  zk_running "$j" && return 0
  mkdir -p "$RUN/zk-$j" "$LIB/zk-$j" "$LOGS"
  echo "$j" > "$LIB/zk-$j/myid"
  # tickTime 1000: sessions of 2-20 s (mesh asks 15 s), and a lost leader is replaced within seconds.
  # forceSync=no: a test fleet need not wait for the disk; the transaction log still records every write.
  # No autopurge: a history checker reads the transaction log of the whole run; down removes it.
  # A TLS fleet's server serves its secureClientPort only (Netty); the keys ZooKeeper's configuration does not
  # name become its zookeeper.* system properties (the ssl.* stores), as its admin guide says.
  local port
  if [ -n "$TLS_ON" ]; then
    port="secureClientPort=$((2280 + j))
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$TLS_DIR/zk-keystore.pem
ssl.keyStore.type=PEM
ssl.trustStore.location=$TLS_DIR/ca.pem
ssl.trustStore.type=PEM"
  else
    port="clientPort=$((2280 + j))
clientPortAddress=127.0.0.1"
  fi
  cat > "$(zk_cfg "$j")" <<CFG
# mesh fleet ZooKeeper server $j of 3 (deploy/dev/fleet.sh). Loopback only.
tickTime=1000
initLimit=10
syncLimit=5
dataDir=$LIB/zk-$j
$port
maxClientCnxns=200
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok,mntr
forceSync=no
server.1=127.0.0.1:22881:23881
server.2=127.0.0.1:22882:23882
server.3=127.0.0.1:22883:23883
CFG
  log "zk-$j: starting on 127.0.0.1:$((2280 + j))${TLS_ON:+ (TLS only)}"
  launch "$LOGS/zk-$j.log" "$RUN/zk-$j.pid" \
    java $ZK_JAVA_OPTS -Dzookeeper.admin.enableServer=false -cp "${jar_copy[0]}" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$(zk_cfg "$j")"
}

zk_serving() { local m; m=$(zk_mode "$1"); [ "$m" = leader ] || [ "$m" = follower ]; }

# All three servers run and serve, as leader or follower.
zk_all_serving() {
  local j
  for j in 1 2 3; do zk_running "$j" && zk_serving "$j" || return 1; done
}

# ---------------------------------------------------------------------------------------------------------------
# Coordinators.

coord_port() { echo $((7170 + $1)); }
coord_marker() { echo " --state-dir $RUN/coordinator-$1/state "; }
coord_running() { running "$RUN/coordinator-$1.pid" "$(coord_marker "$1")"; }
coord_healthy() { http_get "$(scheme)://127.0.0.1:$(coord_port "$1")/healthz" >/dev/null; }

start_coordinator() {
  local k=$1
  stop_stale "$RUN/coordinator-$k.pid" "$(coord_marker "$k")" "coordinator-$k" 20 "${jar_copy[1]}"
  coord_running "$k" && return 0
  mkdir -p "$RUN/coordinator-$k/state" "$LOGS"
  log "coordinator-$k: starting on $(scheme)://127.0.0.1:$(coord_port "$k")"
  local tls=()
  mapfile -t tls < <(zk_tls_args)
  [ -n "$TLS_ON" ] && tls+=(--tls-cert "$TLS_DIR/fleet.pem" --tls-key "$TLS_DIR/fleet.key")
  # No token, open ZooKeeper ACLs: a loopback test fleet; the caller's MESH_TOKEN / MESH_ZK_AUTH / MESH_ZK_TLS do not
  # leak in.
  launch "$LOGS/coordinator-$k.log" "$RUN/coordinator-$k.pid" \
    env -u MESH_TOKEN -u MESH_ZK_AUTH -u MESH_ZK_TLS MESH_COORDINATOR_JAR="${jar_copy[1]}" JAVA_OPTS="$COORDINATOR_JAVA_OPTS" \
      "$repo/deploy/bin/mesh-coordinator" serve --zk "$ZK_CONNECT" --listen "127.0.0.1:$(coord_port "$k")" \
      --state-dir "$RUN/coordinator-$k/state" "${tls[@]}"
}

await_coordinator() {
  local k=$1
  wait_until "$WAIT" "coordinator-$k: GET /healthz ok" coord_healthy "$k" || {
    tail -20 "$LOGS/coordinator-$k.log" >&2; return 1; }
}

# ---------------------------------------------------------------------------------------------------------------
# Agents.

agent_state() { echo "$RUN/fleet-$1/agent"; }
agent_marker() { echo " --state-dir $(agent_state "$1") "; }
agent_running() { running "$RUN/fleet-$1/agent.pid" "$(agent_marker "$1")"; }

# The pid in /mesh/agents/fleet-<i>, read through a coordinator that answers, else with zkcli.
agent_node_pid() {
  local i=$1 k body
  for k in $(seq 1 $COORDINATORS); do
    if body=$(http_get "$(scheme)://127.0.0.1:$(coord_port "$k")/v1/hosts"); then
      jq -r --arg h "fleet-$i" '.hosts[] | select(.host == $h) | .agent.pid // empty' <<<"$body"
      return 0
    fi
  done
  MESH_AGENT_JAR=${jar_copy[0]} "$repo/deploy/bin/zkcli" --zk "$ZK_CONNECT" $(zk_tls_args) get "/mesh/agents/fleet-$i" 2>/dev/null \
    | grep '^{' | jq -r '.pid // empty' || true
}

# The agent of fleet-<i> is up: its process runs and its agent node is its own.
agent_ready() { agent_running "$1" && [ "$(agent_node_pid "$1")" = "$(cat "$RUN/fleet-$1/agent.pid")" ]; }

# start_agent I [CLOCK]: CLOCK (such as +5m) runs the agent with its clock that far off (libfaketime, preloaded so that
# the agent's pid stays the JVM's; FAKETIME_FORCE_MONOTONIC_FIX=0, or the JVM starts ten times slower): the history's fault
# of a host whose time sync failed.
start_agent() {
  local i=$1 clock=${2:-} skew=() jar=${agent_jar_override:-${jar_copy[0]}}
  stop_stale "$RUN/fleet-$i/agent.pid" "$(agent_marker "$i")" "fleet-$i agent" 60 "$jar"
  agent_running "$i" && return 0
  mkdir -p "$(agent_state "$i")" "$RUN/share" "$LOGS"
  if [ -n "$clock" ]; then
    local lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
    if [ ! -f "$lib" ]; then
      (apt-get install -y -q libfaketime >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libfaketime >/dev/null; }) \
        || die "libfaketime is needed for --clock and could not be installed"
    fi
    skew=(LD_PRELOAD="$lib" FAKETIME="$clock" FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_FORCE_MONOTONIC_FIX=0)
  fi
  log "fleet-$i: starting the agent${clock:+ with its clock $clock off}"
  local tls=()
  mapfile -t tls < <(zk_tls_args)
  # --allow-host-path $RUN/share: tests may bind files from there (a step's gate, a registry's data).
  # --allow-host-network: the demos' and tests' containers use network: host (SPEC "Local engine"), which the agent
  # refuses by default (docs/security.md, threat 15).
  launch "$LOGS/fleet-$i-agent.log" "$RUN/fleet-$i/agent.pid" \
    env -u MESH_TOKEN -u MESH_ZK_AUTH -u MESH_ZK_TLS -u DOCKER_HOST "${skew[@]}" MESH_AGENT_JAR="$jar" JAVA_OPTS="$AGENT_JAVA_OPTS" \
      "$repo/deploy/bin/mesh-agent" run --host "fleet-$i" --zk "$ZK_CONNECT" --docker-host "$(sock "$i")" \
      --state-dir "$(agent_state "$i")" --reconcile-interval "$RECONCILE" --allow-host-path "$RUN/share" --allow-host-network \
      "${tls[@]}"
}

# Waits for the agent's own node. An agent killed with SIGKILL leaves its node until its session expires (15 s):
# a new agent that exits meanwhile (it may refuse a --host whose node another live session owns) is started again.
await_agent() {
  local i=$1 deadline=$((SECONDS + WAIT))
  until agent_ready "$i"; do
    [ "$SECONDS" -lt "$deadline" ] || { log "fleet-$i agent: its node /mesh/agents/fleet-$i not within ${WAIT}s"
      tail -20 "$LOGS/fleet-$i-agent.log" >&2; return 1; }
    if ! agent_running "$i"; then
      log "fleet-$i agent exited (see $LOGS/fleet-$i-agent.log); starting it again"
      sleep 2
      if [ "$unlocked" = 1 ]; then
        flock -w 600 9 || die "another fleet.sh has held $RUN/.lock for 10 minutes"
        start_agent "$i"
        flock -u 9
      else
        start_agent "$i"
      fi
    fi
    sleep 0.5
  done
}

stop_agent() {
  # An agent told to stop mid-window ends the window first; 60 s, then SIGKILL.
  stop "$RUN/fleet-$1/agent.pid" "$(agent_marker "$1")" "fleet-$1 agent" 60 "${2:-}"
}

# ---------------------------------------------------------------------------------------------------------------
# Env.

size() { cat "$RUN/size" 2>/dev/null || echo 0; }

write_env() {
  local n=$1 i hosts=""
  for i in $(seq 1 "$n"); do hosts+="${hosts:+ }fleet-$i"; done
  {
    echo "export MESH_ZK=$ZK_CONNECT"
    echo "export MESH_COORDINATOR=$(for k in $(seq 1 $COORDINATORS); do echo "$(scheme)://127.0.0.1:$(coord_port "$k")"; done | paste -sd,)"
    if [ -n "$TLS_ON" ]; then
      echo "export MESH_CA=$TLS_DIR/ca.pem"
      echo "export MESH_ZK_TLS=$TLS_DIR/zk-client.properties"
    else
      echo "unset MESH_CA MESH_ZK_TLS"  # a shell that sourced a TLS fleet's env before
    fi
    echo "export MESH_FLEET_HOSTS=\"$hosts\""
    for i in $(seq 1 "$n"); do
      echo "export MESH_FLEET_DOCKER_fleet_$i=$(sock "$i")"
      echo "export MESH_FLEET_STATE_fleet_$i=$(agent_state "$i")"
    done
  } > "$RUN/env.tmp"
  mv "$RUN/env.tmp" "$RUN/env"
}

# Hosts with a directory under /run/mesh-fleet (started by some `up`), in order.
known_hosts() { local d; for d in "$RUN"/fleet-*/; do [ -d "$d" ] && basename "$d" | sed 's/^fleet-//'; done | sort -n; }

# ---------------------------------------------------------------------------------------------------------------
# Commands.

up() {
  local n=3 tls="" i j k
  SECONDS=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --tls) tls=1 ;;
      *) n=$1 ;;
    esac
    shift
  done
  [[ $n =~ ^[1-9][0-9]?$ ]] || die "up: N must be 1..99; got '$n'"
  [ "$(id -u)" = 0 ] || die "up: run as root (it starts dockerd)"
  # The default engine and the demo images, installing Docker on a fresh Debian machine. Without fd 9: a dockerd it
  # starts lives on, and would hold the fleet lock with it (every later fleet.sh, the nemesis's among them, would wait).
  bash "$here/docker-engine.sh" 9>&-
  command -v curl >/dev/null && command -v jq >/dev/null || {
    log "installing curl jq"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl jq >/dev/null; }
  jars
  mkdir -p "$LOGS"
  # The other mode's parts stop (the engines stay): ZooKeeper keeps its data, agents and coordinators start again.
  # (No mode recorded: a fleet started before modes were, which ran plain text.) New certificates restart a TLS
  # fleet's parts the same way: they hold the old ones.
  load_mode
  [ -n "$tls" ] && make_certs
  if { [ "$TLS_ON" != "$tls" ] || { [ -n "$tls" ] && [ -n "$CERTS_MADE" ]; }; } \
      && { zk_running 1 || zk_running 2 || zk_running 3 || coord_running 1 || coord_running 2 \
      || [ -n "$(for i in $(known_hosts); do agent_running "$i" && echo "$i"; done)" ]; }; then
    log "up: $([ "$TLS_ON" != "$tls" ] && echo "switching the fleet to $([ -n "$tls" ] && echo TLS || echo plain text)" \
      || echo "new certificates"): ZooKeeper, coordinators and agents restart"
    for i in $(known_hosts); do stop_agent "$i" & done; wait
    for k in $(seq 1 $COORDINATORS); do stop "$RUN/coordinator-$k.pid" "$(coord_marker "$k")" "coordinator-$k" 20 & done; wait
    for j in 1 2 3; do stop "$RUN/zk-$j.pid" "$(zk_marker "$j")" "zk-$j" 20 & done; wait
  fi
  TLS_ON=$tls
  if [ -n "$TLS_ON" ]; then echo tls > "$RUN/mode"; else echo plain > "$RUN/mode"; fi
  # Hosts beyond N from an earlier, bigger `up`: an N-host fleet has N hosts.
  for i in $(known_hosts); do
    [ "$i" -le "$n" ] && continue
    stop_agent "$i"; down_engine "$i"
  done
  # Engines and ZooKeeper first, side by side: dockerd and the ZooKeeper JVMs start in parallel.
  for j in 1 2 3; do start_zk "$j"; done
  for i in $(seq 1 "$n"); do start_engine "$i"; done
  local want; want=$(image_ids)
  for i in $(seq 1 "$n"); do await_engine "$i"; reap_ghosts "$i"; load_images "$i" "$want"; done
  wait_until "$WAIT" "ZooKeeper: every server leader or follower" zk_all_serving || { tail -20 "$LOGS"/zk-*.log >&2; exit 1; }
  for k in $(seq 1 $COORDINATORS); do start_coordinator "$k"; done
  for i in $(seq 1 "$n"); do start_agent "$i"; done
  for k in $(seq 1 $COORDINATORS); do await_coordinator "$k"; done
  for i in $(seq 1 "$n"); do await_agent "$i"; done
  echo "$n" > "$RUN/size"
  write_env "$n"
  log "up: $n host(s), 3 ZooKeeper servers, $COORDINATORS coordinators${TLS_ON:+, all TLS} ($SECONDS s); env in $RUN/env"
  cat "$RUN/env"
}

# Engine i: clean, stopped and forgotten; a crashed dockerd whose containerd or containers still run is started to clean them.
down_engine() {
  local i=$1
  if ! engine_answers "$i" && engine_leftovers "$i"; then
    log "fleet-$i: dockerd is down but containers of it still run: starting dockerd to remove them"
    start_engine "$i"; await_engine "$i" || true
  fi
  engine_answers "$i" && clean_engine "$i"
  stop_engine "$i"
  clear_mounts "$i"
  # Its socket, exec root, pid files and agent state (the data root, with the images, stays in $LIB).
  rm -rf "${RUN:?}/fleet-$i" 2>/dev/null || log "fleet-$i: $RUN/fleet-$i not removed: $(rm -rf "$RUN/fleet-$i" 2>&1 | head -1)"
}

down() {
  local i j k
  for i in $(known_hosts); do stop_agent "$i"; done
  for k in $(seq 1 $COORDINATORS); do stop "$RUN/coordinator-$k.pid" "$(coord_marker "$k")" "coordinator-$k" 20; done
  for i in $(known_hosts); do down_engine "$i"; done
  for j in 1 2 3; do stop "$RUN/zk-$j.pid" "$(zk_marker "$j")" "zk-$j" 20; done
  # A fresh ZooKeeper at the next up: no desired state of an earlier run is applied to the new fleet.
  for j in 1 2 3; do rm -rf "${LIB:?}/zk-$j" "${RUN:?}/zk-$j"; done
  for k in $(seq 1 $COORDINATORS); do rm -rf "${RUN:?}/coordinator-$k"; done
  rm -rf "${RUN:?}/jars" "${RUN:?}/share" "$RUN/env" "$RUN/size" "$RUN/mode" "${TLS_DIR:?}"
  log "down"
}

status() {
  local i j k n m
  n=$(size)
  for i in $(known_hosts); do
    if running "$RUN/fleet-$i/dockerd.pid" "$(dockerd_marker "$i")"; then
      if engine_answers "$i"; then m="answering, $(dk "$i" ps -q | wc -l) running container(s)"; else m="not answering"; fi
      echo "fleet-$i dockerd: pid $(pid_of "$RUN/fleet-$i/dockerd.pid") $(sock "$i") $m"
    else
      echo "fleet-$i dockerd: down"
    fi
    if agent_running "$i"; then
      echo "fleet-$i agent: pid $(pid_of "$RUN/fleet-$i/agent.pid") state $(agent_state "$i")"
    else
      echo "fleet-$i agent: down"
    fi
  done
  for j in 1 2 3; do
    if zk_running "$j"; then m=$(zk_mode "$j"); echo "zk-$j: pid $(pid_of "$RUN/zk-$j.pid") 127.0.0.1:$((2280 + j)) ${m:-not serving}"
    else echo "zk-$j: down"; fi
  done
  for k in $(seq 1 $COORDINATORS); do
    if coord_running "$k"; then
      if coord_healthy "$k"; then m=healthy; else m="not healthy"; fi
      echo "coordinator-$k: pid $(pid_of "$RUN/coordinator-$k.pid") $(scheme)://127.0.0.1:$(coord_port "$k") $m"
    else
      echo "coordinator-$k: down"
    fi
  done
  echo "size: $n host(s)$([ -f "$RUN/env" ] && echo "; env: $RUN/env")"
}

# Index argument of the one-part commands: 1..size for hosts, 1..3 for ZooKeeper, 1..2 for coordinators.
index() { [[ ${2:-} =~ ^[1-9][0-9]?$ ]] && [ "$2" -le "$3" ] || die "$1: give an index 1..$3; got '${2:-}'"; echo "$2"; }
host_index() { local n; n=$(size); [ "$n" -gt 0 ] || die "$1: no fleet is up (fleet.sh up)"; index "$1" "${2:-}" "$n"; }

# A single-part start holds the lock while it launches, then lets it go while it waits for the part to answer
# (seconds, for a JVM on a busy machine), so that a fault test can start several parts at once.
unlocked=0
unlock() { flock -u 9; unlocked=1; }

cmd=${1:-status}
shift || true
mkdir -p "$RUN"
# One fleet.sh at a time (two test JVMs running `up` together would start every process twice).
exec 9>"$RUN/.lock"
flock -w 600 9 || die "another fleet.sh has held $RUN/.lock for 10 minutes"
load_mode
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  status) status ;;
  env) [ -f "$RUN/env" ] && cat "$RUN/env" || die "no fleet is up (fleet.sh up)" ;;
  stop-agent) i=$(host_index "$cmd" "${1:-}"); stop_agent "$i" "${2:-}" ;;
  start-agent) i=$(host_index "$cmd" "${1:-}"); shift
    clock=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --clock) clock=${2:?"--clock takes an offset such as +5m"}; shift 2 ;;
        --jar) [ -f "${2:?"--jar takes an agent jar, such as a previous release's"}" ] || die "--jar $2: no such file"
          agent_jar_override=$(readlink -f "$2"); shift 2 ;;
        *) die "start-agent: unknown option $1 (--clock OFFSET, --jar FILE)" ;;
      esac
    done
    jars; start_agent "$i" "$clock"; unlock; await_agent "$i" ;;
  stop-engine) i=$(host_index "$cmd" "${1:-}"); stop_engine "$i" "${2:-}" ;;
  start-engine) i=$(host_index "$cmd" "${1:-}"); running "$RUN/fleet-$i/dockerd.pid" "$(dockerd_marker "$i")" || clear_mounts "$i"
    start_engine "$i"; unlock; await_engine "$i"; reap_ghosts "$i" ;;
  restart-engine) i=$(host_index "$cmd" "${1:-}"); stop_engine "$i" "${2:-}"; clear_mounts "$i"; start_engine "$i"; unlock; await_engine "$i"
    reap_ghosts "$i" ;;
  stop-zk) j=$(index "$cmd" "${1:-}" 3); stop "$RUN/zk-$j.pid" "$(zk_marker "$j")" "zk-$j" 20 "${2:-}" ;;
  start-zk) j=$(index "$cmd" "${1:-}" 3); jars; start_zk "$j"; unlock; wait_until "$WAIT" "zk-$j serving" zk_serving "$j" ;;
  stop-coordinator) k=$(index "$cmd" "${1:-}" $COORDINATORS); stop "$RUN/coordinator-$k.pid" "$(coord_marker "$k")" "coordinator-$k" 20 "${2:-}" ;;
  start-coordinator) k=$(index "$cmd" "${1:-}" $COORDINATORS); jars; start_coordinator "$k"; unlock; await_coordinator "$k" ;;
  -h|--help|help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: $0 up [N] [--tls] | down | status | env | {stop,start}-{agent,engine} I | restart-engine I | {stop,start}-zk J | {stop,start}-coordinator K" >&2; exit 2 ;;
esac
