#!/usr/bin/env bash
# CI: run a test command (default: npm test) and end with one plain line of bun test's own
# counts, "tests: N passed, N failed, N skipped" ("tests, LABEL: ..." with --label); exit non-zero
# when the command failed, a test failed or it printed no counts. With --summary FILE the line,
# and above it each failed test's output again, is also written to FILE (.ci/run prints it again
# at its end, where a log read from its end shows why a test failed).
#
#   bash .ci/tests.sh [--label TEXT] [--summary FILE] [-- command ...]
#
# Under CI=true a suite or test that cannot run here fails rather than skips, unless its reason is
# in ALLOWED_SKIPS (tests/support/skip.ts), so the skipped count is only ever those.
set -uo pipefail
cd "$(dirname "$0")/.."

label="tests"
summary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --label) label="tests, $2"; shift 2 ;;
    --summary) summary="$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && set -- npm test

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
status=0
"$@" 2>&1 | tee "$LOG" || status=$?

count() { sed -n "s/^ *\([0-9][0-9]*\) $1\$/\1/p" "$LOG" | tail -1; }
passed="$(count pass)"; failed="$(count fail)"; skipped="$(count skip)"
if [ -z "$passed" ]; then
  line="${label}: bun test printed no summary (exit $status)"
  echo "$line"; [ -n "$summary" ] && echo "$line" >"$summary"
  exit 1
fi
# Each failed test's own output (its error and code frame) again, just above the summary line,
# where a log read from its end still shows why it failed (at most 40 lines each); each shard's
# closing recap of its failures ("N tests failed:" up to its counts) is left out.
DIGEST="$(mktemp)"
trap 'rm -f "$LOG" "$DIGEST"' EXIT
if [ "${failed:-0}" -ne 0 ]; then
  awk '
    /^[0-9]+ tests? failed:$/ { recap = 1; next }
    /^ *[0-9]+ pass$/ { recap = 0 }
    recap { next }
    /^\((pass|skip|todo)\)/ || /^[^ ].*\.test\.tsx?:$/ { n = 0; next }
    /^\(fail\)/ { print "--- " $0; for (i = (n > 40 ? n - 40 : 0); i < n; i++) print buf[i]; n = 0; next }
    { buf[n++] = $0 }
  ' "$LOG" >"$DIGEST"
fi
line="${label}: ${passed} passed, ${failed:-0} failed, ${skipped:-0} skipped"
cat "$DIGEST"
echo "$line"
[ -n "$summary" ] && { cat "$DIGEST"; echo "$line"; } >"$summary"
[ "$status" -eq 0 ] && [ "${failed:-0}" -eq 0 ]
