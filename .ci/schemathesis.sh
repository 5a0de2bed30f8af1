#!/usr/bin/env bash
# Fuzz every route of the OpenAPI document (GET /swagger/json) with schemathesis, once with a
# valid API key and once with a bad one: no 5xx, and every response must match the document's
# schemas. schemathesis (PyPI, pinned) lives in a venv cached under ~/.cache/brand-api/.
# Usage: bash .ci/schemathesis.sh [max-examples per operation, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."

ST_VERSION=4.32.5
VENV="$HOME/.cache/brand-api/schemathesis-$ST_VERSION"
if [ ! -x "$VENV/bin/st" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==$ST_VERSION"
fi

EXAMPLES="${1:-30}"
BUN="${BUN:-$(command -v bun || echo node_modules/.bin/bun)}"
DATA_DIR="$(mktemp -d)"
PORT="${SCHEMATHESIS_PORT:-18765}"
ADMIN_TOKEN="schemathesis-admin-token-0123456789"
REPORT_DIR="$DATA_DIR/report"

DATA_DIR="$DATA_DIR" PORT="$PORT" HOST=127.0.0.1 ADMIN_TOKEN="$ADMIN_TOKEN" LOG_LEVEL=error \
  "$BUN" src/main.ts &
SERVER=$!
cleanup() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -rf "$DATA_DIR"; }
trap cleanup EXIT

BASE="http://127.0.0.1:$PORT"
# readiness, then an internal key (no daily caps, so fuzzing is not cut short by 429s); python3
# rather than curl, which a fresh machine may lack
KEY="$(BASE="$BASE" ADMIN_TOKEN="$ADMIN_TOKEN" python3 - <<'PY'
import json, os, time, urllib.request
base = os.environ["BASE"]
for _ in range(150):
    try:
        urllib.request.urlopen(base + "/readyz", timeout=2)
        break
    except Exception:
        time.sleep(0.2)
req = urllib.request.Request(
    base + "/admin/keys",
    data=json.dumps({"tier": "internal"}).encode(),
    headers={"authorization": "Bearer " + os.environ["ADMIN_TOKEN"], "content-type": "application/json"},
    method="POST",
)
print(json.load(urllib.request.urlopen(req, timeout=10))["apiKey"])
PY
)"

run() {
  local label="$1" key="$2"
  echo "schemathesis: $label"
  "$VENV/bin/st" run "$BASE/swagger/json" \
    --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
    --header "X-API-Key: $key" \
    --max-examples "$EXAMPLES" \
    --generation-deterministic \
    --workers 1 \
    --no-color
}
status=0
run "valid key" "$KEY" || status=1
run "bad key" "bak_live_not-a-real-key-0000000000000000" || status=1
exit $status
