#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the module for a short budget each, one after the other. The budget is
# an execution count (default 5000x) rather than a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a target with a bare "context deadline exceeded" when -fuzztime ends on a loaded machine
# (go.dev/issue/75804, fixed in Go 1.27). A duration (e.g. 1m) still works for longer local runs.
set -euo pipefail
fuzztime=${1:-5000x}
# Minimising each new interesting input is capped (Go's default is 60 s per input): without a cap a target whose
# inputs grow coverage quickly (the ib capture parser) spends its whole budget minimising, not fuzzing.
minimize=${FUZZMINIMIZETIME:-100x}
cd "$(dirname "$0")/.."
found=0
while IFS= read -r file; do
  pkg=./$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    found=$((found + 1))
    echo "fuzz: $pkg $target for $fuzztime"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" "$pkg"
  done
done < <(git ls-files -z -- '*_test.go' | xargs -0 grep -lE '^func Fuzz' | sort) # tracked files only: not bin/'s tool sources
echo "fuzz: $found targets ran without a failure"
