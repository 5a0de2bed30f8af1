#!/usr/bin/env bash
# CI: lint the OpenAPI document the app serves (/swagger/json) with Redocly's recommended rules
# (.redocly.yaml says why any rule differs). Any error or warning fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
out="${HOME}/.cache/brand-api/openapi.json"
mkdir -p "$(dirname "$out")"
./node_modules/.bin/bun scripts/openapi.ts > "$out"
report=$(./node_modules/.bin/redocly lint "$out" --config .redocly.yaml --format json 2>/dev/null || true)
if ! node -e 'const t = JSON.parse(process.argv[1]).totals; process.exit(t.errors + t.warnings === 0 ? 0 : 1)' "$report"; then
  ./node_modules/.bin/redocly lint "$out" --config .redocly.yaml || true
  echo "redocly: the OpenAPI document has errors or warnings (above)" >&2
  exit 1
fi
echo "redocly: 0 errors, 0 warnings"
