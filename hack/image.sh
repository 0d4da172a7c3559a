#!/usr/bin/env bash
# image.sh builds fabricmap's container images offline, with no registry and no container engine, as OCI
# image archives that `ctr -n k8s.io images import`, `docker load` and `podman load` take.
#
#   hack/image.sh [fabricmap]   → bin/image/fabricmap.tar, tagged ghcr.io/fabricmap/fabricmap:<chart appVersion>
#   hack/image.sh pause         → bin/image/pause.tar, tagged registry.k8s.io/pause:3.10
#
# The fabricmap image is the Dockerfile's, built from the same inputs:
#   - the root filesystem: mmdebstrap --variant=minbase bookworm with the packages of image/packages.txt,
#     the dpkg filters of image/dpkg-excludes and image/finish-rootfs.sh (the Dockerfile's runtime-base stage
#     does the same on debian:bookworm-slim). It is cached under bin/image/cache/, keyed by a hash of those inputs, so a rerun
#     reuses it; REFRESH_ROOTFS=1 rebuilds it (e.g. for Debian security updates).
#   - the binaries: hack/image/build-binaries.sh, as in the Dockerfile's build stage.
#   - the configuration (USER, ENV, LABEL, ENTRYPOINT, CMD, ...): the Dockerfile's final stage, read by the
#     image writer (hack/tools/image), which refuses a final-stage instruction it cannot reproduce.
#
# Environment:
#   IMAGE              the image reference (default ghcr.io/fabricmap/fabricmap:<appVersion of charts/fabricmap>)
#   VERSION            the version stamped into binaries and labels (default: the chart's appVersion)
#   REVISION           the source revision (default: git rev-parse HEAD, plus -dirty for local changes)
#   SOURCE_DATE_EPOCH  the time of the image and its files (default: the commit time of HEAD); the root
#                      filesystem uses it too when set, else the commit time of the last change to image/
#   REFRESH_ROOTFS=1   rebuild the cached root filesystem
set -euo pipefail
# A failure inside $(...) (the root filesystem build) must stop the script, not leave an empty layer.
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/bin}
outdir=$BIN/image
cache=$outdir/cache
what=${1:-fabricmap}
start=$SECONDS

log() { printf '[image] %s\n' "$*" >&2; }
die() { printf '[image] error: %s\n' "$*" >&2; exit 1; }
step() { # step NAME CMD...: runs CMD and logs how long it took
  local name=$1 t=$SECONDS; shift
  "$@"
  log "$name: $((SECONDS - t))s"
}

mkdir -p "$outdir" "$cache"
# One build at a time per checkout: a second caller (e.g. the image test) waits and then reuses the caches.
exec {lock}>"$outdir/.build.lock"
flock "$lock"

writer=$BIN/image-writer
build_writer() {
  (cd "$root/hack/tools/image" && CGO_ENABLED=0 go build -trimpath -o "$writer" .)
}

head_epoch() { git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0; }

build_pause() {
  local out=$outdir/pause.tar ref=registry.k8s.io/pause:3.10 work=$outdir/pause
  local epoch=${SOURCE_DATE_EPOCH:-$(head_epoch)}
  mkdir -p "$work"
  step "writer" build_writer
  # The same build as the Dockerfile's build stage: static, stripped.
  step "pause binary" env -C "$root/hack/tools/image" CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w" -o "$work/pause" ./pause
  step "archive" "$writer" --dockerfile "$root/hack/tools/image/pause/Dockerfile" \
    --add "$work/pause=/pause" --tag "$ref" --out "$out" --source-date-epoch "$epoch" >&2
  log "done in $((SECONDS - start))s"
  echo "$out"
}

# packages prints image/packages.txt without comments and blank lines, comma-separated.
packages() { sed -e 's/#.*//' "$root/image/packages.txt" | tr -s ' \t\n' '\n' | grep -v '^$' | paste -sd, -; }

# rootfs prints the path of the cached root filesystem tar, building it when missing.
rootfs() {
  local epoch
  if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
    epoch=$SOURCE_DATE_EPOCH
  else
    epoch=$(git -C "$root" log -1 --format=%ct -- image/ 2>/dev/null || true)
    epoch=${epoch:-0}
  fi
  # Everything that decides the root filesystem's content goes into its key; bump the recipe version when
  # the mmdebstrap command below changes.
  local recipe="recipe=3 suite=bookworm variant=minbase merged-usr arch=$(dpkg --print-architecture) epoch=$epoch"
  local key
  key=$({ echo "$recipe"; cat "$root/image/packages.txt" "$root/image/dpkg-excludes" "$root/image/finish-rootfs.sh"; } | sha256sum | cut -c1-16)
  local tarball=$cache/rootfs-$key.tar
  if [[ -f $tarball && -z ${REFRESH_ROOTFS:-} ]]; then
    log "root filesystem: cached $(basename "$tarball")"
    echo "$tarball"
    return
  fi
  log "root filesystem: mmdebstrap bookworm minbase + $(packages) (about half a minute)"
  local t=$SECONDS
  # merged-usr: /bin, /lib, /sbin as symlinks into /usr made by mmdebstrap's hook, as in Debian's images,
  # instead of the usrmerge package (which would pull in perl). The dpkg filters land in
  # /etc/dpkg/dpkg.cfg.d/fabricmap-excludes, where the Dockerfile puts them; the host's resolv.conf and
  # hostname are the runtime's business; /dev is the runtime's too (an image layer has no device nodes).
  SOURCE_DATE_EPOCH=$epoch mmdebstrap --quiet --variant=minbase --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include="$(packages)" \
    --dpkgopt="$root/image/dpkg-excludes" \
    --customize-hook='mv "$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap" "$1/etc/dpkg/dpkg.cfg.d/fabricmap-excludes"' \
    --customize-hook="chroot \"\$1\" sh -s <'$root/image/finish-rootfs.sh'" \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    bookworm - | mmtarfilter --path-exclude='/dev/*' >"$tarball.tmp"
  if [[ ! -s $tarball.tmp ]]; then
    rm -f "$tarball.tmp"
    echo "image: the root filesystem build wrote nothing (see mmdebstrap's errors above)" >&2
    return 1
  fi
  mv "$tarball.tmp" "$tarball"
  # Older root filesystems are of no further use: keep only this one.
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -name "$(basename "$tarball")" -delete
  log "root filesystem: built $(basename "$tarball") ($(du -m "$tarball" | cut -f1) MB) in $((SECONDS - t))s"
  echo "$tarball"
}

build_fabricmap() {
  local app_version
  app_version=$(sed -n -E 's/^appVersion:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\1/p' "$root/charts/fabricmap/Chart.yaml")
  [[ -n $app_version ]] || die "no appVersion in charts/fabricmap/Chart.yaml"
  local ref=${IMAGE:-ghcr.io/fabricmap/fabricmap:$app_version}
  local version=${VERSION:-$app_version}
  local revision=${REVISION:-}
  if [[ -z $revision ]]; then
    revision=$(git -C "$root" rev-parse HEAD)
    [[ -z $(git -C "$root" status --porcelain 2>/dev/null) ]] || revision+=-dirty
  fi
  local epoch=${SOURCE_DATE_EPOCH:-$(head_epoch)}
  local out=$outdir/fabricmap.tar bindir=$outdir/binaries

  local tarball
  tarball=$(rootfs)
  rm -rf "$bindir"
  step "binaries" env VERSION="$version" REVISION="$revision" "$root/hack/image/build-binaries.sh" "$bindir"
  step "writer" build_writer
  local adds=() f
  for f in "$bindir"/*; do adds+=(--add "$f=/usr/local/bin/"); done
  adds+=(--add "$root/LICENSE=/usr/share/doc/fabricmap/LICENSE")
  step "archive" "$writer" --dockerfile "$root/Dockerfile" --rootfs "$tarball" --cache "$cache" "${adds[@]}" \
    --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
    --tag "$ref" --out "$out" --source-date-epoch "$epoch" >&2
  # The writer caches the compressed layer of each root filesystem it saw; the newest is the one in use.
  ls -t "$cache"/rootfs-v1-*.tar.gz 2>/dev/null | tail -n +2 | xargs -r rm -f
  log "done in $((SECONDS - start))s"
  echo "$out"
}

case $what in
  fabricmap) build_fabricmap ;;
  pause) build_pause ;;
  *) die "unknown image '$what' (want fabricmap or pause)" ;;
esac
