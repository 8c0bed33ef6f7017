#!/usr/bin/env bash
# Builds mesh's previous release, for the upgrade test (UpgradeIT; docs/decisions/0041-upgrades.md): mesh 0.1.0, the
# commit below (the last one landed before 0.2.0), from this clone's history, into a cache outside the clone that
# later runs on this machine reuse. Prints the directory that holds its mesh-agent.jar and mesh-coordinator.jar.
# Idempotent; about two minutes the first time (a Maven build of that commit), nothing after.
set -euo pipefail
release=0.1.0
commit=80cd9afb7ab4f508e558417ad78685fe90723c9e
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cache=${MESH_RELEASE_CACHE:-/var/cache/mesh-test/releases}
out=$cache/$release-${commit:0:12}
if [ -f "$out/mesh-agent.jar" ] && [ -f "$out/mesh-coordinator.jar" ]; then echo "$out"; exit 0; fi
git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null \
  || { echo "previous-release.sh: commit $commit ($release) is not in $repo's history: clone with its history (no --depth)" >&2; exit 1; }
mkdir -p "$cache"
src=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$src"' EXIT
git -C "$repo" archive "$commit" | tar -x -C "$src"
echo "previous-release.sh: building mesh $release ($commit) in $src" >&2
(cd "$src" && MAVEN_OPTS="${MAVEN_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC}" \
  mvn -B -q ${MAVEN_ARGS:-} package -DskipTests -Dmaven.repo.local="${MESH_RELEASE_M2:-$HOME/.m2/repository}" >&2) \
  || { echo "previous-release.sh: the build of $release failed (see above)" >&2; exit 1; }
tmp=$(mktemp -d "$cache/.out-XXXXXX")
cp "$src/agent/target/mesh-agent.jar" "$src/coordinator/target/mesh-coordinator.jar" "$tmp/"
rm -rf "$out" && mv "$tmp" "$out"
echo "$out"
