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

# Billing is fuzzed configured, against stripe-mock (Stripe's own test server, built by
# .ci/stripe-mock.sh): unconfigured, its routes answer 503 billing_not_configured by design,
# which schemathesis counts as a server error. Without stripe-mock the billing routes are left out.
STRIPE_MOCK="${STRIPE_MOCK_BIN:-$HOME/.cache/brand-api/bin/stripe-mock}"
STRIPE_PORT="$((PORT + 1))"
EXCLUDE=()
MOCK=""
if [ -x "$STRIPE_MOCK" ]; then
  "$STRIPE_MOCK" -http-addr "127.0.0.1:$STRIPE_PORT" -https-addr "127.0.0.1:$((PORT + 2))" >/dev/null 2>&1 &
  MOCK=$!
  export STRIPE_SECRET_KEY=sk_test_schemathesis STRIPE_PRICE_PRO=price_schemathesis \
    STRIPE_WEBHOOK_SECRET=whsec_schemathesis STRIPE_API_BASE="http://127.0.0.1:$STRIPE_PORT"
else
  echo "schemathesis: stripe-mock not found at $STRIPE_MOCK: the /v1/billing routes are not fuzzed"
  EXCLUDE=(--exclude-path-regex '^/v1/billing/')
fi

DATA_DIR="$DATA_DIR" PORT="$PORT" HOST=127.0.0.1 ADMIN_TOKEN="$ADMIN_TOKEN" LOG_LEVEL=error \
  VISITOR_COUNTER_ENABLED=true "$BUN" src/main.ts &
SERVER=$!
cleanup() {
  kill "$SERVER" ${MOCK:+"$MOCK"} 2>/dev/null || true
  wait "$SERVER" ${MOCK:+"$MOCK"} 2>/dev/null || true
  rm -rf "$DATA_DIR"
}
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
    "${EXCLUDE[@]}" \
    --max-examples "$EXAMPLES" \
    --generation-deterministic \
    --workers 1 \
    --no-color
}
status=0
run "valid key" "$KEY" || status=1
run "bad key" "bak_live_not-a-real-key-0000000000000000" || status=1
exit $status
