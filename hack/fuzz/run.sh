#!/usr/bin/env bash
# Runs every Go fuzz target under shared/, functions/ and controllers/ for
# FUZZTIME each (go test -fuzztime syntax: a duration, or Nx for N inputs).
#
# Go 1.26's fuzz coordinator has a race at the end of a duration -fuzztime
# (https://go.dev/issue/75804, fixed in Go 1.27): a worker that is mid-input
# when the deadline fires can make the target FAIL with a bare
# "context deadline exceeded", with no failing input found. Such a run,
# recognised by classify.sh, is retried once; any other failure, and the same
# bare failure twice in a row, fails at once.
set -euo pipefail

FUZZTIME=${FUZZTIME:-3s}
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fuzz_once() { # dir target
  set +e
  go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 3s "./$1" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  return "$rc"
}

grep -rl --include='*_test.go' '^func Fuzz' shared functions controllers | xargs -n1 dirname | sort -u |
  while read -r dir; do
    for target in $(grep -h '^func Fuzz' "$dir"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do
      echo ">> fuzz $dir $target ($FUZZTIME)"
      fuzz_once "$dir" "$target" && continue
      if [ "$("$here/classify.sh" "$log")" = deadline-race ]; then
        echo ">> $target: bare 'context deadline exceeded' at the -fuzztime boundary (go.dev/issue/75804); running it once more"
        fuzz_once "$dir" "$target" && continue
      fi
      exit 1
    done
  done
