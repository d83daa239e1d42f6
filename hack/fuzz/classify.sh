#!/usr/bin/env bash
# classify.sh LOG prints what a failed `go test -fuzz` run's output shows:
#   deadline-race  the only failure is Go 1.26's bare "context deadline
#                  exceeded" at the -fuzztime boundary (go.dev/issue/75804):
#                  no failing input written, no panic, no other test output
#   failure        anything else: a real finding, a build error, a hang
set -euo pipefail
log=$1
if grep -qE 'Failing input written to|^panic:|fuzzing process hung|testdata/fuzz/' "$log"; then
  echo failure; exit 0
fi
# The lines after "--- FAIL: FuzzX" must be exactly the bare deadline message,
# followed only by go test's own summary lines.
body=$(awk '/^--- FAIL: Fuzz/{on=1; next} on' "$log" |
  grep -vE '^(FAIL|exit status [0-9]+|FAIL[[:space:]].*|ok[[:space:]].*)$' | sed 's/^[[:space:]]*//' || true)
if grep -q '^--- FAIL: Fuzz' "$log" && [ "$body" = "context deadline exceeded" ]; then
  echo deadline-race
else
  echo failure
fi
