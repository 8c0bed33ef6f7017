#!/usr/bin/env bash
# A 3-server ZooKeeper ensemble on loopback, for development and fault drills (docs/failure-model.md).
#
#   deploy/zk/ensemble.sh start  [DIR]   start the servers that are not running; wait for a quorum
#   deploy/zk/ensemble.sh stop   [DIR]   stop every server (SIGTERM, then SIGKILL after 10 s)
#   deploy/zk/ensemble.sh status [DIR]   each server's pid and mode (leader / follower / down)
#
# DIR (default /tmp/mesh-zk) holds zkN/zoo.cfg, zkN/data, zkN/server.log and zkN/pid. One JVM per server, running
# org.apache.zookeeper.server.quorum.QuorumPeerMain from the agent jar (it contains ZooKeeper); build it first with
# `mvn -B -q package -DskipTests`. Clients connect with --zk 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183.
# Nothing listens beyond 127.0.0.1; the admin server is off; four-letter words: srvr, ruok, mntr.
# To drill a fault: kill -9 "$(cat DIR/zk2/pid)", kill -STOP / -CONT, then `start` again.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
repo=$(cd "$here/../.." && pwd)
cmd=${1:-status}
dir=${2:-/tmp/mesh-zk}
jar=${MESH_AGENT_JAR:-$repo/agent/target/mesh-agent.jar}

alive() { [ -f "$dir/zk$1/pid" ] && kill -0 "$(cat "$dir/zk$1/pid")" 2>/dev/null; }
port() { echo $((2180 + $1)); }
# A four-letter word over bash's /dev/tcp, bounded: prints the answer, empty when the server does not answer.
fourlw() {
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$(port "$1"); printf '%s' '$2' >&3; cat <&3" 2>/dev/null || true
}
mode() { fourlw "$1" srvr | sed -n 's/^Mode: //p'; }

start() {
  [ -f "$jar" ] || { echo "ensemble: $jar is missing: build it with 'cd $repo && mvn -B -q package -DskipTests'" >&2; exit 1; }
  for i in 1 2 3; do
    if alive "$i"; then echo "zk$i: already running (pid $(cat "$dir/zk$i/pid"))"; continue; fi
    mkdir -p "$dir/zk$i/data"
    echo "$i" > "$dir/zk$i/data/myid"
    sed "s#@DIR@#$dir#g" "$here/zoo$i.cfg" > "$dir/zk$i/zoo.cfg"
    # setsid: the server outlives this shell and is not killed with its process group.
    setsid java ${ZK_JAVA_OPTS:--Xmx256m} -Dzookeeper.admin.enableServer=false -cp "$jar" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zk$i/zoo.cfg" >>"$dir/zk$i/server.log" 2>&1 </dev/null &
    echo $! > "$dir/zk$i/pid"
    echo "zk$i: started (pid $!, client port $(port "$i"))"
  done
  for _ in $(seq 1 60); do
    leaders=0; up=0
    for i in 1 2 3; do
      m=$(mode "$i"); [ -n "$m" ] && up=$((up + 1)); [ "$m" = leader ] && leaders=$((leaders + 1))
    done
    if [ "$leaders" = 1 ] && [ "$up" -ge 2 ]; then status; return 0; fi
    sleep 1
  done
  echo "ensemble: no quorum within 60 s; see $dir/zk*/server.log" >&2
  status
  exit 1
}

stop() {
  for i in 1 2 3; do
    if alive "$i"; then
      pid=$(cat "$dir/zk$i/pid"); kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid"
      for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
      echo "zk$i: stopped (pid $pid)"
    fi
    rm -f "$dir/zk$i/pid"
  done
}

status() {
  for i in 1 2 3; do
    if alive "$i"; then
      m=$(mode "$i"); echo "zk$i: pid $(cat "$dir/zk$i/pid") 127.0.0.1:$(port "$i") ${m:-not serving}"
    else
      echo "zk$i: down"
    fi
  done
  echo "connect: 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status [DIR]" >&2; exit 2 ;;
esac
