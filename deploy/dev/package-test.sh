#!/usr/bin/env bash
# The packages for real (SPEC.md, "Running it for real"), root on this Debian machine with its Docker engine:
#   1. bash deploy/package.sh (arguments are passed on: --no-build uses the jars already built);
#   2. each .deb by dpkg-deb --info/--contents: Depends on openjdk-17-jre-headless, the units, the conffiles;
#      the image mesh/agent:<version> answers --help, and later runs an agent that applies a push (below);
#   3. in a clean Debian container (debootstrap --variant=minbase, imported once as mesh-test/debian:<codename> with
#      systemd added as the test's tool; neither package depends on it): apt-get install ./mesh-agent_*.deb
#      ./mesh-coordinator_*.deb, so that apt brings the Java runtime from the packages' Depends (nothing of it is in the
#      image; only the downloaded .debs are kept between runs, in /var/cache/mesh-package-test);
#   4. systemd runs in that container (PID 1): systemd-analyze verify passes for the units, `systemctl start
#      mesh-coordinator` serves /healthz, `mesh status` answers, `systemctl start mesh-agent` brings its host into
#      `mesh status`, a push makes a container on this machine's engine (the container has the engine's socket;
#      docker.service is a stand-in unit there) and a delete removes it, zkcli answers, mesh-backup.service writes a
#      backup (when `mesh backup` exists), the timer enables;
#   5. apt-get purge: postrm names what it keeps under /var/lib/mesh; no file that `dpkg -L` listed is left (but
#      directories other packages own), and no new file or directory named *mesh* outside /var/lib/mesh.
# The container has its own network namespace (--network none: the coordinator and its ZooKeeper take their default
# ports without meeting this machine's); apt's downloads run first in a container on the host's network.
# Exit 0 when every check passed; the last line counts them. Everything it starts it removes, on failure too, but the
# cached base image and the image mesh/agent:<version> that package.sh made.
set -euo pipefail
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
cd "$repo"
codename=${MESH_TEST_CODENAME:-bookworm}
mirror=${MESH_TEST_MIRROR:-http://deb.debian.org/debian}
base=mesh-test/debian:$codename
cache=/var/cache/mesh-package-test
ctr=mesh-pkgtest-$$
module=pkgtest  # the module pushed in the container; its container on this machine's engine is pkgtest-sleeper
passed=0 failed=0
t0=$SECONDS

say() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - t0)); }
ok() { passed=$((passed + 1)); echo "  ok: $* ($((SECONDS - t0))s)"; }
bad() { failed=$((failed + 1)); echo "  FAILED: $* ($((SECONDS - t0))s)" >&2; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() {
  echo
  echo "package-test: $((SECONDS - t0)) s"
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
abort() { bad "$1"; finish || true; exit 1; }
in_ctr() { docker exec -i "$ctr" "$@"; }  # -i: a here-document or file on stdin reaches the command
cleanup() {
  docker rm -f "$ctr-image" "$ctr" "$ctr-dl" "$ctr-base" >/dev/null 2>&1 || true
  docker ps -aq --filter "name=^${module}-" | xargs -r docker rm -f >/dev/null 2>&1 || true
  [ -z "${tmp:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
tmp=$(mktemp -d /tmp/mesh-package-test.XXXXXX)

timeout 10 docker version >/dev/null 2>&1 || bash deploy/dev/docker-engine.sh

say "package.sh $*"
bash deploy/package.sh "$@"
version=$(sed -n -e '/<parent>/,/<\/parent>/d' -e 's:.*<version>\([^<]*\)</version>.*:\1:p' pom.xml | head -1)
agent_deb=$(ls dist/mesh-agent_*_all.deb)
coordinator_deb=$(ls dist/mesh-coordinator_*_all.deb)
check "dist/mesh-$version.tar.gz is a tarball with both jars" \
  bash -c "tar -tzf dist/mesh-$version.tar.gz | grep -qx 'mesh-$version/agent/target/mesh-agent.jar' && tar -tzf dist/mesh-$version.tar.gz | grep -qx 'mesh-$version/coordinator/target/mesh-coordinator.jar'"

say "dpkg-deb --info / --contents"
deb_has() {  # deb_has DEB PATH...: every PATH is in DEB, owned by root
  local deb=$1 p; shift
  dpkg-deb --contents "$deb" >"$tmp/contents"
  for p in "$@"; do
    grep -qE "^[-dl]\S+ root/root .* \.$p( -> .*)?\$" "$tmp/contents" || { echo "    $deb: no $p (root/root)" >&2; return 1; }
  done
}
for deb in "$agent_deb" "$coordinator_deb"; do
  pkg=$(dpkg-deb --field "$deb" Package)
  check "$pkg depends on openjdk-17-jre-headless" bash -c "dpkg-deb --field '$deb' Depends | tr ',' '\n' | grep -qE '^ *openjdk-17-jre-headless( |\$)'"
  check "$pkg is Architecture: all, version $(dpkg-deb --field "$deb" Version)" test "$(dpkg-deb --field "$deb" Architecture)" = all
  check "$pkg has postinst, prerm, postrm" bash -c "dpkg-deb --info '$deb' | grep -qE '^ +[0-9]+ bytes, +[0-9]+ lines +\* +postinst' && dpkg-deb --info '$deb' | grep -q ' prerm' && dpkg-deb --info '$deb' | grep -q ' postrm'"
done
check "mesh-agent's files" deb_has "$agent_deb" /usr/bin/mesh-agent /usr/bin/zkcli /usr/share/mesh/mesh-agent.jar \
  /lib/systemd/system/mesh-agent.service /etc/mesh/agent.env
check "mesh-coordinator's files" deb_has "$coordinator_deb" /usr/bin/mesh-coordinator /usr/bin/mesh \
  /usr/share/mesh/mesh-coordinator.jar /usr/share/mesh/mesh-backup /lib/systemd/system/mesh-coordinator.service \
  /lib/systemd/system/mesh-backup.service /lib/systemd/system/mesh-backup.timer /etc/mesh/coordinator.env
check "mesh-agent's conffiles: /etc/mesh/agent.env" test "$(dpkg-deb --ctrl-tarfile "$agent_deb" | tar -xO ./conffiles)" = /etc/mesh/agent.env
check "mesh-coordinator's conffiles: /etc/mesh/coordinator.env" \
  test "$(dpkg-deb --ctrl-tarfile "$coordinator_deb" | tar -xO ./conffiles)" = /etc/mesh/coordinator.env
check "the image mesh/agent:$version runs the agent (--help)" \
  bash -c "docker run --rm mesh/agent:$version run --help 2>&1 | grep -q '^Usage: mesh-agent run'"

say "base image $base"
if docker image inspect "$base" >/dev/null 2>&1; then
  echo "  cached"
else
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
  debootstrap --variant=minbase "$codename" "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 \
    || { tail -20 "$tmp/debootstrap.log" >&2; exit 1; }
  # A snapshot mirror's Release files may be past their Valid-Until.
  echo 'Acquire::Check-Valid-Until "false";' >"$tmp/rootfs/etc/apt/apt.conf.d/99mesh-test"
  tar -C "$tmp/rootfs" -c . | docker import - "$base-debootstrap" >/dev/null
  rm -rf "$tmp/rootfs"
  # systemd: the test's tool (PID 1, systemctl, systemd-analyze), not a dependency of the packages.
  docker run --name "$ctr-base" --network host "$base-debootstrap" sh -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd systemd-sysv >/dev/null && apt-get clean' \
    || exit 1
  docker commit --change 'CMD ["/lib/systemd/systemd"]' "$ctr-base" "$base" >/dev/null
  docker rm "$ctr-base" >/dev/null
  docker image rm "$base-debootstrap" >/dev/null
  echo "  made (debootstrap $codename minbase + systemd)"
fi

say "apt-get install --download-only (host network)"
mkdir -p "$cache/lists" "$cache/archives"
apt_mounts=(-v "$cache/lists:/var/lib/apt/lists" -v "$cache/archives:/var/cache/apt/archives" -v "$repo/dist:/dist:ro")
debs="/dist/${agent_deb#dist/} /dist/${coordinator_deb#dist/}"
# apt's lists are fetched again once a day (a mirror drops the files that older lists name).
update="apt-get update -qq &&"
if find "$cache/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | grep -q .; then update=; fi
docker run --rm --name "$ctr-dl" --network host "${apt_mounts[@]}" "$base" sh -c \
  "$update DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only --no-install-recommends $debs >/dev/null"

say "a container running systemd (no network)"
docker run -d --name "$ctr" --network none --cap-add SYS_ADMIN --tmpfs /run --tmpfs /run/lock \
  -v /sys/fs/cgroup:/sys/fs/cgroup:ro "${apt_mounts[@]}" -v /var/run/docker.sock:/run/docker.sock "$base" >/dev/null
for _ in $(seq 1 60); do
  state=$(in_ctr systemctl is-system-running 2>/dev/null || true)
  case $state in running | degraded) break ;; esac
  sleep 0.5
done
check "systemd runs in the container ($state)" bash -c "case '$state' in running|degraded) true;; *) false;; esac"
# Docker's unit stands in for the engine whose socket is mounted (mesh-agent.service Requires= it).
in_ctr sh -c 'cat >/etc/systemd/system/docker.service && systemctl daemon-reload' <<'UNIT'
[Unit]
Description=stand-in for docker.service (package-test.sh: the engine whose socket is mounted is the host's)
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
UNIT
in_ctr sh -c 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \) -prune -o -print | sort' >"$tmp/before"

say "apt-get install ./mesh-agent_*.deb ./mesh-coordinator_*.deb"
# --force-unsafe-io: no fsync for each file of a container thrown away afterwards (the JRE's thousands).
in_ctr env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
  $debs >"$tmp/install.log" 2>&1 \
  || { tail -30 "$tmp/install.log" >&2; abort "apt-get install"; }
grep -E '^mesh-' "$tmp/install.log" | sed 's/^/  postinst: /'
check "apt installed openjdk-17-jre-headless for the Depends" grep -q '^Setting up openjdk-17-jre-headless' "$tmp/install.log"
in_ctr dpkg -L mesh-agent mesh-coordinator | sort -u >"$tmp/files"
check "the units are in /lib/systemd/system" in_ctr test -f /lib/systemd/system/mesh-agent.service -a -f /lib/systemd/system/mesh-coordinator.service \
  -a -f /lib/systemd/system/mesh-backup.service -a -f /lib/systemd/system/mesh-backup.timer
check "systemd-analyze verify passes for the units" in_ctr systemd-analyze verify /lib/systemd/system/mesh-agent.service \
  /lib/systemd/system/mesh-coordinator.service /lib/systemd/system/mesh-backup.service /lib/systemd/system/mesh-backup.timer
check "the system user mesh, its home /var/lib/mesh" bash -c "docker exec $ctr getent passwd mesh | grep -q ':/var/lib/mesh:/usr/sbin/nologin\$'"
check "/etc/mesh/coordinator.env is root:mesh 0640" test "$(in_ctr stat -c '%U:%G %a' /etc/mesh/coordinator.env)" = "root:mesh 640"
check "mesh, zkcli, mesh-agent, mesh-coordinator on PATH (/usr/bin)" in_ctr sh -c 'for c in mesh zkcli mesh-agent mesh-coordinator; do [ "$(command -v $c)" = /usr/bin/$c ] || exit 1; done'

say "systemctl start mesh-coordinator, mesh-agent"
# The settings an operator makes: the host's id, a token (an admin's, for the backup).
in_ctr sed -i 's/^MESH_HOST=.*/MESH_HOST=pkgtest/' /etc/mesh/agent.env
in_ctr sed -i 's/^MESH_TOKEN=.*/MESH_TOKEN=pkgtest-token/; s/^MESH_COORDINATOR_ARGS=.*/MESH_COORDINATOR_ARGS=--admin token/' /etc/mesh/coordinator.env
in_ctr systemctl enable --now mesh-coordinator.service >/dev/null 2>&1 || true
healthz() { in_ctr bash -c 'exec 3<>/dev/tcp/127.0.0.1/7070 && printf "GET /healthz HTTP/1.0\r\n\r\n" >&3 && head -1 <&3' 2>/dev/null | grep -q ' 200'; }
for _ in $(seq 1 120); do healthz && break; sleep 0.5; done
check "mesh-coordinator (systemctl) answers GET /healthz 200" healthz
check "the coordinator runs as mesh" bash -c "docker exec $ctr sh -c 'stat -c %U /proc/\$(systemctl show -p MainPID --value mesh-coordinator)' | grep -qx mesh"
mesh() { in_ctr env MESH_TOKEN=pkgtest-token HOME=/root mesh "$@"; }
check "mesh status answers" mesh status >/dev/null
in_ctr systemctl enable --now mesh-agent.service >/dev/null 2>&1 || true
for _ in $(seq 1 60); do mesh status 2>/dev/null | grep -q '^pkgtest' && break; sleep 1; done
check "mesh-agent (systemctl) is active and its host in mesh status" bash -c "docker exec $ctr systemctl is-active --quiet mesh-agent && docker exec $ctr env MESH_TOKEN=pkgtest-token mesh status | grep -q '^pkgtest'"
in_ctr sh -c "cat >/tmp/pkgtest.yaml" <<EOF
module: $module
hosts: [pkgtest]
containers:
  sleeper:
    image: mesh-demo/busybox:1
    command: ["sleep", "600"]
    network: none
    stop-timeout: "1s"    # sleep as PID 1 ignores SIGTERM: the delete would wait 10 s for the kill
EOF
check "mesh push --wait: the agent applies it (container $module-sleeper on this machine's engine)" \
  bash -c "docker exec $ctr env MESH_TOKEN=pkgtest-token timeout 90 mesh push /tmp/pkgtest.yaml --wait >/dev/null && docker ps --format '{{.Names}}' | grep -qx $module-sleeper"
check "mesh delete --wait removes it" \
  bash -c "docker exec $ctr env MESH_TOKEN=pkgtest-token timeout 90 mesh delete $module --wait >/dev/null && ! docker ps -a --format '{{.Names}}' | grep -qx $module-sleeper"
# The image's agent, in the test container's network namespace (so it reaches the packaged coordinator's ZooKeeper on
# its 127.0.0.1), with this machine's engine socket mounted: a push for its host lands on that engine. The packaged
# agent stops first: both would be agents of one engine, and a delete's tombstone has every agent remove the module's
# containers from its engine.
in_ctr systemctl stop mesh-agent
in_ctr sh -c "sed 's/hosts: \[pkgtest\]/hosts: [pkgimage]/; s/^module: $module\$/module: $module-img/' /tmp/pkgtest.yaml >/tmp/pkgimage.yaml"
docker run -d --name "$ctr-image" --network "container:$ctr" -v /var/run/docker.sock:/var/run/docker.sock \
  "mesh/agent:$version" run --host pkgimage --zk 127.0.0.1:2181 --state-dir /tmp/agent >/dev/null
check "the image mesh/agent:$version runs an agent that applies a push to the engine whose socket it mounts" \
  bash -c "docker exec $ctr env MESH_TOKEN=pkgtest-token timeout 90 mesh push /tmp/pkgimage.yaml --wait >/dev/null && docker ps --format '{{.Names}}' | grep -qx $module-img-sleeper"
check "... and removes it on a delete" \
  bash -c "docker exec $ctr env MESH_TOKEN=pkgtest-token timeout 90 mesh delete $module-img --wait >/dev/null && ! docker ps -a --format '{{.Names}}' | grep -qx $module-img-sleeper"
[ "$failed" = 0 ] || { echo "  the image's agent's log, last lines:"; docker logs "$ctr-image" 2>&1 | tail -15 | sed 's/^/    /'; }
docker rm -f "$ctr-image" >/dev/null 2>&1 || true
check "zkcli answers (ls /mesh)" bash -c "docker exec $ctr zkcli ls /mesh | grep -q agents"
check "mesh-backup.timer enables and waits" bash -c "docker exec $ctr systemctl enable --now mesh-backup.timer >/dev/null 2>&1 && docker exec $ctr systemctl is-active --quiet mesh-backup.timer"
if grep -qE '^ +backup ' <<<"$(mesh --help 2>/dev/null)"; then  # not a pipe: grep -q's early exit would fail it (pipefail)
  check "mesh-backup.service writes /var/lib/mesh/backups/mesh-DAY.json" \
    bash -c "docker exec $ctr systemctl start mesh-backup.service && docker exec $ctr sh -c 'test -s /var/lib/mesh/backups/mesh-\$(date +%F).json'"
else
  echo "  skipped: mesh-backup.service (this build's mesh has no backup command yet)"
fi

say "apt-get purge mesh-agent mesh-coordinator"
in_ctr env DEBIAN_FRONTEND=noninteractive apt-get purge -y mesh-agent mesh-coordinator >"$tmp/purge.log" 2>&1 \
  || { tail -30 "$tmp/purge.log" >&2; abort "apt-get purge"; }
grep -E '^mesh-|^dpkg: warning' "$tmp/purge.log" | sed 's/^/  /'
check "postrm names what it keeps under /var/lib/mesh" grep -qE '^mesh-(agent|coordinator): purged; kept .*/var/lib/mesh/' "$tmp/purge.log"
check "no mesh process is left" in_ctr sh -c '! grep -qs /usr/share/[m]esh /proc/[0-9]*/cmdline'
grep -vx '/\.' "$tmp/files" | in_ctr sh -c 'while read -r f; do if [ -e "$f" ] || [ -L "$f" ]; then dpkg -S "$f" >/dev/null 2>&1 || echo "$f"; fi; done' >"$tmp/left"
check "no file of the packages is left (dpkg -L before, the filesystem after; directories of other packages aside)" \
  bash -c "[ ! -s $tmp/left ] || { sed 's/^/    left: /' $tmp/left >&2; false; }"
in_ctr sh -c 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \) -prune -o -print | sort' >"$tmp/after"
# New since before the install, by name: anything of mesh's but its data (and root's class-data cache that the mesh
# launcher keeps in the home of whoever runs it, as any user's).
comm -13 "$tmp/before" "$tmp/after" | grep -i mesh | grep -vE '^/var/lib/mesh(/|$)|^/root/\.cache/mesh(/|$)' >"$tmp/new" || true
check "no new path named *mesh* outside /var/lib/mesh" bash -c "[ ! -s $tmp/new ] || { sed 's/^/    left: /' $tmp/new >&2; false; }"
check "/var/lib/mesh is kept" in_ctr test -d /var/lib/mesh/coordinator

finish
