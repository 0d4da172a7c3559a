#!/usr/bin/env bash
# demo-cold.sh measures what a new user's first `make demo` costs: it clones this repository's HEAD into a
# temporary folder, gives the build an empty Go build cache (and, with --empty-modcache, an empty module cache,
# so that every module is downloaded from the proxy too), runs `make demo` there, step by step as its
# prerequisites run (demo-tools, demo-build, then the demo until it has printed the tree and the plans, with
# DEMO_EXIT=1 so that it exits), and prints the time of each step and the whole. It reports; it asserts nothing
# (the target, ten minutes on two cores, is in the README).
# Usage: hack/demo-cold.sh [--empty-modcache]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOCACHE="$work/gocache"
if [ "${1:-}" = --empty-modcache ]; then
  export GOMODCACHE="$work/gomodcache"
fi
git clone -q "$root" "$work/fabricmap"
cd "$work/fabricmap"
# ../shared beside the clone, as CI has it, when the repository has one beside it.
[ -d "$root/../shared" ] && ln -s "$root/../shared" "$work/shared"
now() { date +%s; }
t0=$(now)
step() { # step NAME COMMAND...: run it, print its time
  local s; s=$(now)
  "${@:2}" >"$work/$1.log" 2>&1 || { echo "demo-cold: $1 failed; its log:" >&2; tail -30 "$work/$1.log" >&2; exit 1; }
  printf '%-28s %4ds\n' "$1" "$(( $(now) - s ))"
}
echo "cold make demo on $(nproc) cores (GOCACHE empty${GOMODCACHE:+, GOMODCACHE empty}):"
step "etcd and kube-apiserver" make --no-print-directory demo-tools
step "fabricmap-demo and agent" make --no-print-directory demo-build
step "the demo itself" env DEMO_EXIT=1 make --no-print-directory demo
total=$(( $(now) - t0 ))
printf '%-28s %4ds (%dm%02ds; target 10m)\n' "total" "$total" $((total / 60)) $((total % 60))
