#!/usr/bin/env bash
# Installs a Java 17 JDK and Maven from Debian's packages when they are missing (root on Debian). Idempotent.
set -euo pipefail
missing=()
if ! command -v javac >/dev/null 2>&1 || ! javac -version 2>&1 | grep -qE 'javac (1[7-9]|2[0-9])'; then missing+=(openjdk-17-jdk-headless); fi
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "java.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
