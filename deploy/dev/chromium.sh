#!/usr/bin/env bash
# Installs Debian's `chromium` package when it is missing (root on Debian). Idempotent.
# The coordinator's page test (coordinator/src/test/.../DashboardBrowserTest) starts it headless against the
# coordinator on 127.0.0.1 and keeps a screenshot under coordinator/target/.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
echo "chromium.sh: installing chromium" >&2
export DEBIAN_FRONTEND=noninteractive
# Other set-up scripts may hold the dpkg lock: wait for it rather than fail.
apt-get -o DPkg::Lock::Timeout=300 update -qq
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "chromium.sh: chromium is still missing after apt-get install" >&2; exit 1; }
