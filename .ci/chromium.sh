#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (driven by playwright-core with
# executablePath /usr/bin/chromium; no browser download). Does nothing when it is there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
