#!/usr/bin/env bash
# The client's cost (docs/benchmark-notes.md, B9): the size of
# each shaded jar, and the wall time of `deploy/bin/mesh --help`, `deploy/bin/mesh status` and `deploy/bin/mesh held`, RUNS times each
# (default 10), median and range, the variants interleaved run by run. `status` and `held` ask MESH_COORDINATOR when it
# is set (then `curl` of the same GET /v1/fleet and GET /v1/held is measured too, as the floor), else a URL that refuses connections
# (127.0.0.1:1). After a build (`mvn -B -q package -DskipTests`):
#
#   bash deploy/bench/client.sh                          # the built coordinator/target/mesh-coordinator.jar
#   bash deploy/bench/client.sh /tmp/old.jar JAR...      # several coordinator jars, with this deploy/bin/mesh
#   bash deploy/bench/client.sh /tmp/mesh-old:/tmp/old.jar JAR    # LAUNCHER:JAR runs that jar with that launcher
#                                                        # (e.g. git show OLD:deploy/bin/mesh >/tmp/mesh-old)
#
# Each variant runs once before the measured runs, so that a launcher's class-data archive exists (deploy/bin/mesh
# makes it on first use, in a cache of its own for this run); FIRST=N (default 3) also measures N first uses, each
# with an empty cache. Needs nothing else running; the load of a shared machine moves the absolute times, so compare
# variants in one run.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
runs=${RUNS:-10}
first=${FIRST:-3}
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=("$repo/coordinator/target/mesh-coordinator.jar")
launchers=() jars=()
for v in "${variants[@]}"; do
  if [[ $v == *:* ]]; then launchers+=("${v%%:*}") jars+=("${v#*:}"); else launchers+=("$repo/deploy/bin/mesh") jars+=("$v"); fi
done
for j in "${jars[@]}" "$repo/agent/target/mesh-agent.jar"; do
  [ -f "$j" ] || { echo "client.sh: $j is missing: build with 'mvn -B -q package -DskipTests'" >&2; exit 1; }
  printf '%-60s %9d bytes, %5d classes\n' "$j" "$(stat -c %s "$j")" "$(unzip -Z1 "$j" | grep -c '\.class$')"
done
coordinator=${MESH_COORDINATOR:-http://127.0.0.1:1}

# ms WANT COMMAND...: its wall time; the command must exit with WANT, else the script stops (a command that failed
# would be timed as a fast one). Against a coordinator every command must succeed (0); without one, status and held
# must fail as a refused connection does (4), and that is what is timed.
ms() {
  local want=$1 t0 t1 rc=0
  shift
  t0=$(date +%s%N); "$@" >/dev/null 2>&1 || rc=$?; t1=$(date +%s%N)
  if [ "$rc" != "$want" ]; then echo "client.sh: '$*' exited $rc, not $want" >&2; exit 1; fi
  echo $(((t1 - t0) / 1000000))
}
stats() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "median %d ms (min %d, max %d, n=%d)", m, a[1], a[NR], NR}'; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mesh() {  # mesh I ARGS...: variant I
  MESH_CLIENT_CACHE=$work/cache MESH_COORDINATOR_JAR=${jars[$1]} MESH_COORDINATOR=$coordinator "${launchers[$1]}" "${@:2}"
}
want=0
[ -n "${MESH_COORDINATOR:-}" ] || want=4
for i in "${!jars[@]}"; do mesh "$i" status >/dev/null 2>&1 || true; done
for _ in $(seq 1 "$runs"); do
  for i in "${!jars[@]}"; do
    ms 0 mesh "$i" --help >>"$work/help.$i"
    ms "$want" mesh "$i" status >>"$work/status.$i"
    ms "$want" mesh "$i" held >>"$work/held.$i"
  done
  [ -z "${MESH_COORDINATOR:-}" ] || { ms 0 curl -sf --noproxy '*' "$coordinator/v1/fleet" >>"$work/curl"; ms 0 curl -sf --noproxy '*' "$coordinator/v1/held" >>"$work/curl-held"; }
done
for i in "${!jars[@]}"; do
  if [ "$first" -gt 0 ] && grep -q cds_archive "${launchers[$i]}"; then
    for _ in $(seq 1 "$first"); do
      rm -rf "$work/cache"
      ms "$want" mesh "$i" status >>"$work/first.$i"
    done
  fi
done
for i in "${!jars[@]}"; do
  echo "${launchers[$i]} ${jars[$i]}"
  echo "  mesh --help:                      $(stats <"$work/help.$i")"
  echo "  mesh status ($coordinator): $(stats <"$work/status.$i")"
  echo "  mesh held ($coordinator):   $(stats <"$work/held.$i")"
  [ ! -f "$work/first.$i" ] || echo "  mesh status, first use (makes the archive): $(stats <"$work/first.$i")"
done
[ ! -f "$work/curl" ] || echo "curl $coordinator/v1/fleet: $(stats <"$work/curl")"
[ ! -f "$work/curl-held" ] || echo "curl $coordinator/v1/held:  $(stats <"$work/curl-held")"
echo "nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
