#!/usr/bin/env bash
# install-koord.sh builds Koordinator's koord-scheduler at the pinned version from its Go module (the tools
# module hack/tools/koord, whose replace lines hold Koordinator's Kubernetes 1.28 set apart from fabricmap's),
# for test/koordinator. It installs into a git-ignored cache (bin/ by default), reusing a build at the pinned
# version:
#
#   bin/koord-scheduler     -> koord-scheduler-v1.7.0, the scheduler
#   bin/koord-crds          -> koord-crds-v1.7.0, the CRDs shipped in Koordinator's module (config/crd/bases)
#
# Cold, the build takes about 3 minutes of CPU on 2 cores (8 minutes of wall time seen on a busy machine);
# progress goes to stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/bin}
# KOORD_VERSION must match the require line of hack/tools/koord/go.mod.
KOORD_VERSION=v1.7.0
module=github.com/koordinator-sh/koordinator
tools=$root/hack/tools/koord

log() { printf '[install-koord] %s\n' "$*" >&2; }

pinned=$(cd "$tools" && go list -m -f '{{.Version}}' "$module")
[[ $pinned == "$KOORD_VERSION" ]] || { log "hack/tools/koord/go.mod pins $module $pinned, this script $KOORD_VERSION"; exit 1; }

mkdir -p "$BIN"
# One builder at a time: a second caller waits for the first and then reuses its result.
exec {lock}>"$BIN/koord-$KOORD_VERSION.lock"
flock "$lock"

target=$BIN/koord-scheduler-$KOORD_VERSION
if [[ ! -x $target ]]; then
  log "building koord-scheduler $KOORD_VERSION (first time only; this can take several minutes)…"
  start=$SECONDS
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$target.tmp" "$module/cmd/koord-scheduler")
  mv "$target.tmp" "$target"
  log "built koord-scheduler $KOORD_VERSION in $((SECONDS - start))s"
fi

crds=$BIN/koord-crds-$KOORD_VERSION
if [[ ! -d $crds ]]; then
  dir=$(cd "$tools" && go mod download -json "$module@$KOORD_VERSION" | sed -n -E 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  [[ -d $dir/config/crd/bases ]] || { log "no config/crd/bases in $module $KOORD_VERSION ($dir)"; exit 1; }
  rm -rf "$crds.tmp"
  mkdir "$crds.tmp"
  cp "$dir"/config/crd/bases/*.yaml "$crds.tmp/"
  chmod u+w "$crds.tmp"/*.yaml
  mv "$crds.tmp" "$crds"
fi

# Each link is replaced in one rename, so a tool in use by another process is never missing.
for name in koord-scheduler koord-crds; do
  ln -sfn "$name-$KOORD_VERSION" "$BIN/.$name.link.$$"
  mv -Tf "$BIN/.$name.link.$$" "$BIN/$name"
done
exec {lock}>&-
