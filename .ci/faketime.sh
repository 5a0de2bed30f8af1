#!/usr/bin/env bash
# CI: Debian's faketime, for the pass with the clock moved ahead (.ci/run). It shifts every
# process that reads the time through libc: bun, node, deno, PostgreSQL, Chromium, redis-server.
# Go binaries (FerretDB, stripe-mock) read the clock without libc and keep the real time.
set -euo pipefail
if ! command -v faketime >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq faketime >/dev/null
fi
faketime -f +1d date -u +"faketime: the clock +1 day reads %F"
