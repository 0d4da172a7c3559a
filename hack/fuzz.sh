#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the module for a short time each (default 10s), one after the other.
set -euo pipefail
fuzztime=${1:-10s}
cd "$(dirname "$0")/.."
found=0
while IFS= read -r file; do
  pkg=./$(dirname "$file")
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    found=$((found + 1))
    echo "fuzz: $pkg $target for $fuzztime"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
  done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' . | sort)
echo "fuzz: $found targets ran without a failure"
