#!/usr/bin/env bash
# Packages mesh (SPEC.md, "Running it for real"). From the repository, root on Debian, it writes:
#   dist/mesh-agent_<deb-version>_all.deb        the agent, zkcli, mesh-agent.service, /etc/mesh/agent.env
#   dist/mesh-coordinator_<deb-version>_all.deb  the coordinator, mesh, mesh-coordinator.service, mesh-backup.{service,timer},
#                                                /etc/mesh/coordinator.env; postinst makes the system user mesh
#   dist/mesh-<version>.tar.gz                   the repository's layout with the jars built and no source: the
#                                                launchers (deploy/bin) and deploy/systemd's units work from it as from
#                                                a checkout (at /opt/mesh for the units)
#   the image mesh/agent:<version>               the agent on a Java 17 runtime made with jlink from this machine's JDK
#                                                (tar | docker import, as deploy/dev/docker-engine.sh makes the test
#                                                images: nothing pulled)
# <version> is the Maven project version (pom.xml); <deb-version> is the same with '~' for '-' (0.1.0-SNAPSHOT ->
# 0.1.0~SNAPSHOT, which Debian sorts before 0.1.0; a '-' would read as a Debian revision). Docker tags take no '~',
# so the tarball and the image keep the Maven version.
#
# Both packages depend on Debian's openjdk-17-jre-headless; the launchers run the `java` on PATH. Their files:
#   /usr/bin/{mesh-agent,zkcli | mesh-coordinator,mesh}  deploy/bin's launchers, each with its jar's path set
#   /usr/share/mesh/mesh-{agent,coordinator}.jar, /usr/share/mesh/mesh-backup (the backup unit's script)
#   /lib/systemd/system/*.{service,timer}                deploy/systemd's units, /opt/mesh/deploy/... read as /usr/...
#   /etc/mesh/{agent,coordinator}.env                    conffiles: deploy/systemd's, commented
#   /usr/share/doc/mesh-{agent,coordinator}/runbook.md
# Maintainer scripts: deploy/debian/. deploy/systemd stays the one source of the units (their hardening is written once):
# this script rewrites only their paths, and fails if a path of the checkout is left in a packaged unit.
#
# Usage: bash deploy/package.sh [--no-build] [--no-image]
#   --no-build  use the jars already under */target (they must be of pom.xml's version); default: mvn package first
#               (MAVEN_ARGS is passed on, e.g. MAVEN_ARGS=-o)
#   --no-image  no Docker image (no engine needed)
set -euo pipefail
umask 022
build=1 image=1
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    --no-image) image=0 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument '$arg' (--no-build, --no-image)" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$repo"
log() { echo "package: $*" >&2; }
die() { echo "package.sh: $*" >&2; exit 1; }

command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian's dpkg)"
# The project's version: the first <version> of pom.xml outside <parent>.
version=$(sed -n -e '/<parent>/,/<\/parent>/d' -e 's:.*<version>\([^<]*\)</version>.*:\1:p' pom.xml | head -1)
[ -n "$version" ] || die "no <version> in pom.xml"
deb_version=${version//-/\~}
[[ $deb_version =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "pom.xml's version '$version' makes no Debian version ('$deb_version')"
[[ $version =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "pom.xml's version '$version' is no Docker tag"

agent_jar=agent/target/mesh-agent.jar
coordinator_jar=coordinator/target/mesh-coordinator.jar
if [ "$build" = 1 ]; then
  log "building the jars (mvn package -DskipTests)"
  # shellcheck disable=SC2086 # MAVEN_ARGS is a list of arguments
  mvn -B -q ${MAVEN_ARGS:-} package -DskipTests
fi
for m in agent coordinator; do
  jar=$m/target/mesh-$m.jar
  [ -f "$jar" ] || die "$jar is missing: run without --no-build"
  built=$(sed -n 's/^version=//p' "$m/target/maven-archiver/pom.properties" 2>/dev/null || true)
  [ "$built" = "$version" ] || die "$jar is of version '${built:-unknown}', pom.xml says '$version': run without --no-build"
done

stage=$(mktemp -d /tmp/mesh-package.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p dist
rm -f dist/mesh-agent_*_all.deb dist/mesh-coordinator_*_all.deb dist/mesh-*.tar.gz

# launcher NAME JARVAR JAR DEST: deploy/bin/NAME with JARVAR's default set to JAR (the launchers honour JARVAR and
# otherwise look under the checkout), in front of the line that reads it.
launcher() {
  local name=$1 var=$2 jar=$3 dest=$4
  mkdir -p "$(dirname "$dest")"
  sed "/^jar=\${$var:-/i : \"\${$var:=$jar}\"  # the packaged jar (deploy/package.sh)" "deploy/bin/$name" >"$dest"
  [ "$(grep -c "^: \"\${$var:=$jar}\"" "$dest")" = 1 ] || die "deploy/bin/$name: no line 'jar=\${$var:-...' to set the jar's path before"
  chmod 0755 "$dest"
}

# unit FILE PKG DEST: deploy/systemd's FILE with the checkout's paths (/opt/mesh) replaced by the package's.
unit() {
  local file=$1 pkg=$2 dest=$3
  mkdir -p "$(dirname "$dest")"
  sed -e 's|/opt/mesh/deploy/bin/|/usr/bin/|g' \
    -e 's|/opt/mesh/deploy/bin:|/usr/bin:|g' \
    -e 's|/opt/mesh/deploy/systemd/mesh-backup|/usr/share/mesh/mesh-backup|g' \
    -e "s|file:///opt/mesh/docs/runbook.md|file:///usr/share/doc/$pkg/runbook.md|g" \
    -e "s|Install: see deploy/systemd/README.md.|Installed by the $pkg package (deploy/package.sh).|" \
    -e 's| (from [a-z]*\.env here)||' \
    "deploy/systemd/$file" >"$dest"
  if grep -n '/opt/mesh' "$dest" >&2; then die "deploy/systemd/$file: a path of the checkout is left in the packaged unit (above)"; fi
  chmod 0644 "$dest"
}

# control PKG ROOT DEPENDS DESCRIPTION...: DEBIAN/control, the maintainer scripts, and DEBIAN/conffiles (every file
# under etc/).
control() {
  local pkg=$1 root=$2 depends=$3 extra=$4; shift 4
  mkdir -p "$root/DEBIAN"
  local size
  size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
  {
    echo "Package: $pkg"
    echo "Version: $deb_version"
    echo "Architecture: all"
    echo "Maintainer: mesh developers <mesh@localhost>"
    echo "Section: admin"
    echo "Priority: optional"
    echo "Installed-Size: $size"
    echo "Depends: $depends"
    [ -z "$extra" ] || echo "$extra"
    echo "Description: $1"
    shift
    for line in "$@"; do echo " $line"; done
  } >"$root/DEBIAN/control"
  (cd "$root" && find etc -type f | sort | sed 's|^|/|') >"$root/DEBIAN/conffiles"
  for script in postinst prerm postrm; do
    install -m 0755 "deploy/debian/$pkg.$script" "$root/DEBIAN/$script"
  done
}

# deb ROOT: dist/<Package>_<Version>_all.deb. The jars are zip files already: gzip, not xz, which took 30 s more for
# nothing.
deb() {
  local root=$1 pkg
  pkg=$(sed -n 's/^Package: //p' "$root/DEBIAN/control")
  dpkg-deb --build --root-owner-group -Zgzip "$root" "dist/${pkg}_${deb_version}_all.deb" >/dev/null
  log "wrote dist/${pkg}_${deb_version}_all.deb"
}

# --- mesh-agent
root=$stage/mesh-agent
install -D -m 0644 "$agent_jar" "$root/usr/share/mesh/mesh-agent.jar"
launcher mesh-agent MESH_AGENT_JAR /usr/share/mesh/mesh-agent.jar "$root/usr/bin/mesh-agent"
launcher zkcli MESH_AGENT_JAR /usr/share/mesh/mesh-agent.jar "$root/usr/bin/zkcli"
unit mesh-agent.service mesh-agent "$root/lib/systemd/system/mesh-agent.service"
install -D -m 0644 deploy/systemd/agent.env "$root/etc/mesh/agent.env"
install -D -m 0644 docs/runbook.md "$root/usr/share/doc/mesh-agent/runbook.md"
control mesh-agent "$root" "openjdk-17-jre-headless, mawk | awk" "Recommends: docker.io | docker-ce" \
  "mesh agent: keeps this host's Docker containers at the state pushed to mesh" \
  "The agent of mesh, one per Docker host: it applies the modules that operators push" \
  "through the coordinator to the local engine, reconciles them, and runs their" \
  "maintenance windows. Also zkcli, ZooKeeper's client pointed at mesh's ensemble." \
  "." \
  "Settings: /etc/mesh/agent.env (set MESH_HOST); then systemctl enable --now mesh-agent."
deb "$root"

# --- mesh-coordinator
root=$stage/mesh-coordinator
install -D -m 0644 "$coordinator_jar" "$root/usr/share/mesh/mesh-coordinator.jar"
launcher mesh-coordinator MESH_COORDINATOR_JAR /usr/share/mesh/mesh-coordinator.jar "$root/usr/bin/mesh-coordinator"
launcher mesh MESH_COORDINATOR_JAR /usr/share/mesh/mesh-coordinator.jar "$root/usr/bin/mesh"
install -D -m 0755 deploy/systemd/mesh-backup "$root/usr/share/mesh/mesh-backup"
for f in mesh-coordinator.service mesh-backup.service mesh-backup.timer; do
  unit "$f" mesh-coordinator "$root/lib/systemd/system/$f"
done
install -D -m 0644 deploy/systemd/coordinator.env "$root/etc/mesh/coordinator.env"
install -D -m 0644 docs/runbook.md "$root/usr/share/doc/mesh-coordinator/runbook.md"
control mesh-coordinator "$root" "openjdk-17-jre-headless, passwd" "" \
  "mesh coordinator: takes pushes and serves the fleet's state; the mesh client" \
  "The coordinator of mesh: it takes operators' pushes, writes the desired state" \
  "into ZooKeeper (an embedded server, or an ensemble), and serves the HTTP API, the" \
  "operator's page and /metrics. Also mesh, the operator's client, and a nightly" \
  "backup timer (mesh-backup.timer). Runs as the system user mesh." \
  "." \
  "Settings: /etc/mesh/coordinator.env; then systemctl enable --now mesh-coordinator."
deb "$root"

# --- the tarball: mesh-<version>/ in the checkout's layout, the jars built, no source.
top=mesh-$version
root=$stage/tar/$top
mkdir -p "$root"
cp -a --parents deploy/bin deploy/systemd deploy/examples deploy/zk docs README.md "$root/"
install -D -m 0644 "$agent_jar" "$root/$agent_jar"
install -D -m 0644 "$coordinator_jar" "$root/$coordinator_jar"
# One archive for the same commit: names sorted, owners and times fixed (the commit's time).
mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$stage/tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -c "$top" | gzip -n >"dist/$top.tar.gz"
log "wrote dist/$top.tar.gz"

# --- the image mesh/agent:<version>
if [ "$image" = 1 ]; then
  timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
    || die "no Docker engine answers (bash deploy/dev/docker-engine.sh starts one), or run with --no-image"
  java_home=$(readlink -f "$(command -v java)")
  java_home=${java_home%/bin/java}
  [ -x "$java_home/bin/jlink" ] && [ -d "$java_home/jmods" ] \
    || die "$java_home has no jlink and jmods: the image's runtime is made with the JDK's jlink (Debian's openjdk-17-jdk-headless)"
  "$java_home/bin/java" -version 2>&1 | grep -q '"17[."]' || die "$java_home is not Java 17"
  root=$stage/image
  mkdir -p "$root"/usr/{bin,lib,lib64,sbin} "$root"/{etc,tmp,root,var/lib/mesh/agent,etc/mesh,proc,sys,dev}
  for d in bin lib lib64 sbin; do ln -s "usr/$d" "$root/$d"; done  # merged /usr, as Debian's
  chmod 1777 "$root/tmp"
  # The JRE: Java SE's modules and the jdk.* ones the agent or its libraries use (jdeps on the agent jar names
  # java.se's and jdk.httpserver, jdk.unsupported; the rest are reached by name at run time: TLS, Kerberos/SASL for
  # ZooKeeper, management beans). About 55 MB, against 260 MB for the JDK's directory.
  jre=/usr/lib/jvm/mesh-java-17
  "$java_home/bin/jlink" --add-modules java.se,jdk.httpserver,jdk.unsupported,jdk.management,jdk.crypto.ec,jdk.security.auth,jdk.charsets,jdk.zipfs,jdk.naming.dns \
    --strip-debug --no-man-pages --no-header-files --compress=2 --output "$root$jre"
  ln -s "$jre/bin/java" "$root/usr/bin/java"
  # bash for the launcher; env, dirname and readlink, which it runs.
  for tool in bash env dirname readlink; do cp -L "$(command -v "$tool")" "$root/usr/bin/$tool"; done
  ln -s bash "$root/usr/bin/sh"
  # The shared libraries they and the JRE load, from this machine, where ldd finds them (the JRE's own libraries find
  # libjvm.so through the JVM that loads them, ldd through LD_LIBRARY_PATH).
  libs=$(for f in "$root"/usr/bin/{bash,env,dirname,readlink} "$root$jre/bin/java" $(find "$root$jre/lib" -name '*.so'); do
    LD_LIBRARY_PATH=$root$jre/lib:$root$jre/lib/server ldd "$f" 2>/dev/null || true
  done)
  if grep 'not found' <<<"$libs" >&2; then die "ldd finds no library above for the image's runtime"; fi
  for lib in $(grep -oE '/[^ ]+\.so[^ ]*' <<<"$libs" | grep -v "^$root" | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  install -D -m 0644 "$agent_jar" "$root/usr/share/mesh/mesh-agent.jar"
  launcher mesh-agent MESH_AGENT_JAR /usr/share/mesh/mesh-agent.jar "$root/usr/bin/mesh-agent"
  echo 'root:x:0:0:root:/root:/usr/bin/bash' >"$root/etc/passwd"
  echo 'root:x:0:' >"$root/etc/group"
  old=$(docker image inspect --format '{{.Id}}' "mesh/agent:$version" 2>/dev/null || true)
  tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/bin' \
    --change "LABEL org.opencontainers.image.title=mesh-agent org.opencontainers.image.version=$version" \
    --change 'ENTRYPOINT ["/usr/bin/mesh-agent"]' \
    --change 'CMD ["--help"]' \
    - "mesh/agent:$version" >/dev/null
  # The image this one replaces under the tag, unless a container still uses it.
  if [ -n "$old" ] && [ "$old" != "$(docker image inspect --format '{{.Id}}' "mesh/agent:$version")" ]; then
    docker image rm "$old" >/dev/null 2>&1 || true
  fi
  log "imported mesh/agent:$version ($(docker image inspect --format '{{.Size}}' "mesh/agent:$version" | awk '{printf "%d MB", $1/1e6}'))"
fi
