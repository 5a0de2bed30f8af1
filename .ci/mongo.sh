#!/usr/bin/env bash
# CI / developer machines: build the MongoDB-wire server the tests start (tests/support/mongo.ts,
# scripts/mongo-local.ts): FerretDB v1 (on PostgreSQL from .ci/postgres.sh, or SQLite) at a pinned
# release, with `go build` from the Go module proxy into ~/.cache/brand-api/bin/ferretdb. Reused
# when that binary is present.
# Exports nothing: the test harness looks for the binary there (or FERRETDB_BIN, or PATH).
set -euo pipefail

FERRETDB_VERSION=v1.24.0
FERRETDB_COMMIT=7d9c7b9922555c1c8b64fe1ac596f4c1efb570ce
BIN_DIR="${HOME}/.cache/brand-api/bin"
BIN="${BIN_DIR}/ferretdb"

if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q "version: ${FERRETDB_VERSION}$"; then
  echo "ferretdb ${FERRETDB_VERSION}: cached at ${BIN}"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "ferretdb: no Go toolchain; the MongoDB tests will skip" >&2
  exit 0
fi

started=$(date +%s)
# `go install ...@version` cannot be used: it reads the module's version list for deprecation
# notices (refused by the proxy here), and the release zip lacks build/version/version.txt,
# which FerretDB embeds (a binary built without it panics at start). So: download the module,
# copy it, write version.txt, build.
src=$(go mod download -json "github.com/FerretDB/FerretDB@${FERRETDB_VERSION}" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
echo "$FERRETDB_VERSION" >"$work/build/version/version.txt"
echo "$FERRETDB_COMMIT" >"$work/build/version/commit.txt"
mkdir -p "$BIN_DIR"
(cd "$work" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$BIN.tmp" ./cmd/ferretdb)
mv "$BIN.tmp" "$BIN"
echo "ferretdb ${FERRETDB_VERSION}: built in $(($(date +%s) - started)) s at ${BIN}"
