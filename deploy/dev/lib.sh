# Shell helpers of the demos (demo.sh, demo-fleet.sh), sourced from the repository's root. fail() prints
# "$DEMO_NAME FAILED: ..." (default: DEMO); set DEMO_NAME before sourcing to name another demo.

say()  { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { printf '\n\033[31m%s FAILED: %s\033[0m\n' "${DEMO_NAME:-DEMO}" "$*" >&2; exit 1; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || fail "timed out after ${secs}s waiting for: $what"
    sleep 0.5
  done
}

# set_up: Java and Maven, the Docker engine and the demo images, and the jars when they are not built.
set_up() {
  bash deploy/dev/java.sh
  bash deploy/dev/docker-engine.sh
  if [ ! -f agent/target/mesh-agent.jar ] || [ ! -f coordinator/target/mesh-coordinator.jar ]; then
    echo "building the jars (mvn package -DskipTests)"
    mvn -B -q package -DskipTests
  fi
}

# push_revision FILE REVISION OUT: mesh push FILE --revision REVISION, its output shown and kept in OUT; sets PUSH to
# the push id it printed.
push_revision() {
  deploy/bin/mesh push "$1" --revision "$2" | tee "$3"
  PUSH=$(awk '/^push-/{print $1; exit}' "$3")
  [ -n "$PUSH" ] || fail "no push id in the output of mesh push"
}
