#!/usr/bin/env bash
# Installs stripe-mock (Stripe's API test server) at a pinned version into ~/.cache/brand-api/bin,
# where scripts/stripe-mock.ts finds it for the billing tests. Reused when already there.
set -euo pipefail
VERSION=v0.203.0
BIN_DIR="$HOME/.cache/brand-api/bin"
STAMP="$BIN_DIR/stripe-mock.version"
if [ -x "$BIN_DIR/stripe-mock" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "stripe-mock: go is not installed; the billing tests that need stripe-mock will skip" >&2
  exit 0
fi
mkdir -p "$BIN_DIR"
GOBIN="$BIN_DIR" go install "github.com/stripe/stripe-mock@$VERSION"
echo "$VERSION" > "$STAMP"
