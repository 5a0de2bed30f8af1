#!/usr/bin/env bash
# CI / developer machines: Debian's PostgreSQL server binaries, the backend of the FerretDB the
# MongoDB tests start (scripts/mongo-local.ts runs initdb and postgres from
# /usr/lib/postgresql/<version>/bin into a temp dir per run). Installed only when missing.
set -euo pipefail
found() { compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; }
if ! found; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  # the tests start their own clusters: no system cluster is created or started by the package
  $SUDO mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.d/brand-api.conf >/dev/null
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
"$(ls /usr/lib/postgresql/*/bin/postgres | sort -V | tail -1)" --version
