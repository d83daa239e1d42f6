#!/usr/bin/env bash
# Checks classify.sh against the logs in testdata/: a file's name says what it
# must be classed as (deadline-race*.log or failure*.log).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
status=0
for f in "$here"/testdata/*.log; do
  name=$(basename "$f" .log)
  case $name in deadline-race*) want=deadline-race ;; *) want=failure ;; esac
  got=$("$here/classify.sh" "$f")
  if [ "$got" != "$want" ]; then
    echo "classify.sh $name: got $got, want $want"; status=1
  fi
done
[ $status -eq 0 ] && echo "ok  	hack/fuzz classify.sh ($(ls "$here"/testdata/*.log | wc -l) logs)"
exit $status
