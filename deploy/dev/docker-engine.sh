#!/usr/bin/env bash
# Local Docker engine for mesh's tests and demos (SPEC.md, "Local engine").
#
# Idempotent, root on Debian. It:
#   1. installs docker.io, busybox-static and docker-registry from Debian's packages when missing
#      (apt-get update first);
#   2. starts `dockerd --bridge=none --iptables=false` when no engine answers (log: /var/log/mesh-dockerd.log);
#   3. imports two images built from those packages, when they are missing:
#        mesh-demo/busybox:1         busybox-static, /bin/sh and the applets
#        mesh-demo/registry:2.8.2    Debian's docker-registry (Distribution 2.8.2) as /bin/registry,
#                                    its config at /etc/docker/registry/config.yml, plus busybox.
# No image registry is reachable here, so nothing is pulled. Nothing listens beyond loopback.
set -euo pipefail

log() { echo "docker-engine: $*" >&2; }

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)
[ -x /usr/bin/docker-registry ] || need_pkgs+=(docker-registry)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # docker-registry's postinst would start a registry service on :5000; policy-rc.d keeps it from starting.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi

engine_answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if ! engine_answers; then
  log "no engine answers; starting dockerd --bridge=none --iptables=false"
  # A stale pid file from a killed dockerd blocks a new one.
  if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then rm -f /var/run/docker.pid; fi
  command -v containerd >/dev/null 2>&1 || { log "containerd missing (comes with docker.io)"; exit 1; }
  nohup dockerd --bridge=none --iptables=false --ip6tables=false >>/var/log/mesh-dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do engine_answers && break; sleep 1; done
  engine_answers || { log "dockerd did not answer within 60s; see /var/log/mesh-dockerd.log"; tail -20 /var/log/mesh-dockerd.log >&2; exit 1; }
fi

# busybox-static's binary needs no library inside an image.
busybox_bin=$(dpkg -L busybox-static | grep -E '/s?bin/busybox$' | head -1)

build_rootfs() {  # $1: dir; lays busybox with its applets as symlinks
  local root=$1
  mkdir -p "$root"/{bin,etc,tmp,var/lib,proc,sys,dev}
  chmod 1777 "$root/tmp"
  cp "$busybox_bin" "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
  echo 'root:x:0:' > "$root/etc/group"
}

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if ! image_exists mesh-demo/busybox:1; then
  log "importing mesh-demo/busybox:1"
  build_rootfs "$tmp/busybox"
  tar -C "$tmp/busybox" -c . | docker import --change 'CMD ["/bin/sh"]' - mesh-demo/busybox:1 >/dev/null
fi

if ! image_exists mesh-demo/registry:2.8.2; then
  log "importing mesh-demo/registry:2.8.2"
  root="$tmp/registry"
  build_rootfs "$root"
  cp /usr/bin/docker-registry "$root/bin/registry"
  # A dynamically linked build needs its libraries inside the image.
  if ldd /usr/bin/docker-registry >/dev/null 2>&1; then
    for lib in $(ldd /usr/bin/docker-registry | grep -oE '/[^ ]+'); do
      mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"
    done
  fi
  mkdir -p "$root/etc/docker/registry" "$root/var/lib/registry"
  cat > "$root/etc/docker/registry/config.yml" <<'YML'
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: /var/lib/registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:5000
YML
  tar -C "$root" -c . | docker import \
    --change 'ENTRYPOINT []' \
    --change 'CMD ["/bin/registry", "serve", "/etc/docker/registry/config.yml"]' \
    --change 'VOLUME /var/lib/registry' \
    - mesh-demo/registry:2.8.2 >/dev/null
fi

log "ready: $(docker version --format 'engine {{.Server.Version}}'); images: $(docker images --format '{{.Repository}}:{{.Tag}}' | grep '^mesh-demo/' | tr '\n' ' ')"
