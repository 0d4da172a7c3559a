#!/usr/bin/env bash
# release.sh writes a release of fabricmap into dist/ (`make release`), offline: everything is built here from
# the checkout and the Go module cache.
#
#   dist/fabricmap-<chart version>.tgz                      the chart (helm package), its README generated
#   dist/fabricmap_<version>_<os>_<arch>.tar.gz            the CLI for linux and darwin, amd64 and arm64:
#                                                           fabricmap and kubectl-fabricmap (the same binary),
#                                                           README.md and LICENSE
#   dist/fabricmap-image_<version>_linux_amd64.tar          the container image (OCI archive; hack/image.sh)
#   dist/kubectl-fabricmap.yaml                             a krew plugin manifest for the CLI archives
#   dist/SHA256SUMS, dist/index.json                        checksums, and the list of what is here
#
# The CLIs are built without cgo, so that one build host makes all four: they lack only the nvml probe of
# `fabricmap probe` (the image's binaries, with cgo, have it). Every archive holds the LICENSE (the chart's is
# charts/fabricmap/LICENSE).
#
# Reproducible: two runs on one commit write the same bytes (the same SHA256SUMS). The CLIs are built with
# -trimpath and no VCS stamp but the revision; every tar is written with its files owned by root, their modes
# normalised and dated at the commit (SOURCE_DATE_EPOCH), gzipped without a name or time. helm package dates
# each file of the chart at the time it runs, so its archive is repacked: the same files in helm's order.
#
#   hack/release.sh [chart] [cli] [image]   only these parts (default: all; the checksums and the index always)
#
# Environment:
#   VERSION        the release version (default: the chart's appVersion)
#   DIST           the output folder (default: dist/)
#   SKIP_IMAGE=1   leave the image out (it needs root: mmdebstrap)
#   URL_BASE       where the archives will be downloadable, for the krew manifest (default: the GitHub release)
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[release] %s\n' "$*" >&2; }

app_version=$(sed -n -E 's/^appVersion:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\1/p' charts/fabricmap/Chart.yaml)
chart_version=$(sed -n -E 's/^version:[[:space:]]*"?([^"[:space:]]+)"?[[:space:]]*$/\1/p' charts/fabricmap/Chart.yaml)
version=${VERSION:-$app_version}
revision=$(git rev-parse HEAD)
[[ -z $(git status --porcelain) ]] || revision+=-dirty
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
dist=${DIST:-$root/dist}
url_base=${URL_BASE:-https://github.com/fabricmap/fabricmap/releases/download/v$version}

parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(chart cli image)
for p in "${parts[@]}"; do
  [[ $p == chart || $p == cli || $p == image ]] || { echo "release.sh: unknown part $p (chart, cli, image)" >&2; exit 2; }
done
want() { [[ " ${parts[*]} " == *" $1 "* ]]; }

rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# retar DIR LIST OUT writes the files of DIR named in LIST (one a line, in that order) into the gzipped tar OUT,
# reproducibly: owned by root, dated at the commit, directories none, modes 0644 or (executables) 0755.
retar() {
  tar --format=ustar --no-recursion --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --mode='a+rX,u+w,go-w' -C "$1" -T "$2" -cf - | gzip -n -9 >"$3"
}

if want chart; then
  log "chart $chart_version"
  hack/install-tools.sh helm
  go run ./hack/tools/chartreadme -check
  [[ -f charts/fabricmap/LICENSE ]] && cmp -s LICENSE charts/fabricmap/LICENSE ||
    { echo "release.sh: charts/fabricmap/LICENSE is not a copy of LICENSE" >&2; exit 1; }
  mkdir -p "$work/chart/files"
  bin/helm package charts/fabricmap -d "$work/chart" >/dev/null
  tgz=fabricmap-$chart_version.tgz
  tar -tzf "$work/chart/$tgz" >"$work/chart/list"
  grep -qx 'fabricmap/LICENSE' "$work/chart/list" || { echo "release.sh: the chart package has no LICENSE" >&2; exit 1; }
  tar -xzmf "$work/chart/$tgz" -C "$work/chart/files"
  retar "$work/chart/files" "$work/chart/list" "$dist/$tgz"
fi

ldflags="-s -w -X github.com/fabricmap/fabricmap/internal/version.version=$version -X github.com/fabricmap/fabricmap/internal/version.revision=$revision"
platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
for p in "${platforms[@]}"; do
  want cli || break
  os=${p%/*} arch=${p#*/}
  log "CLI $os/$arch"
  dir=$work/$os-$arch
  mkdir -p "$dir"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$dir/fabricmap" ./cmd/fabricmap
  cp "$dir/fabricmap" "$dir/kubectl-fabricmap"
  cp README.md LICENSE "$dir/"
  printf '%s\n' LICENSE README.md fabricmap kubectl-fabricmap >"$work/$os-$arch.list"
  retar "$dir" "$work/$os-$arch.list" "$dist/fabricmap_${version}_${os}_${arch}.tar.gz"
done

if want image && [[ ${SKIP_IMAGE:-} != 1 ]]; then
  log "image"
  VERSION=$version hack/image.sh >/dev/null
  install -m 0644 bin/image/fabricmap.tar "$dist/fabricmap-image_${version}_linux_amd64.tar"
fi

sha() { sha256sum "$1" | cut -d' ' -f1; }

# A krew manifest: `kubectl krew install --manifest=kubectl-fabricmap.yaml --archive=fabricmap_…tar.gz` installs
# from these files, and `kubectl krew install --manifest-url=<URL_BASE>/kubectl-fabricmap.yaml` (what the chart's
# NOTES print) from the published release.
want cli && {
  printf 'apiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\nmetadata:\n  name: fabricmap\n'
  printf 'spec:\n  version: v%s\n  homepage: https://github.com/fabricmap/fabricmap\n' "$version"
  printf '  shortDescription: See the network topology fabricmap discovered (HyperNodes, labels, health)\n'
  printf '  description: |\n    The fabricmap CLI as a kubectl plugin: kubectl fabricmap get nodes, get hypernodes, topology, place.\n'
  printf '  platforms:\n'
  for p in "${platforms[@]}"; do
    os=${p%/*} arch=${p#*/}
    file=fabricmap_${version}_${os}_${arch}.tar.gz
    printf '    - selector:\n        matchLabels: {os: %s, arch: %s}\n' "$os" "$arch"
    printf '      uri: %s/%s\n      sha256: %s\n      bin: kubectl-fabricmap\n' "$url_base" "$file" "$(sha "$dist/$file")"
  done
} >"$dist/kubectl-fabricmap.yaml"

(cd "$dist" && ls | LC_ALL=C sort | xargs sha256sum -- >"$work/SHA256SUMS" && mv "$work/SHA256SUMS" SHA256SUMS)
{
  printf '{\n  "version": "%s",\n  "revision": "%s",\n  "chartVersion": "%s",\n  "files": [\n' "$version" "$revision" "$chart_version"
  first=1
  for f in $(cd "$dist" && ls | LC_ALL=C sort); do
    [[ $f == index.json ]] && continue
    [[ $first == 1 ]] || printf ',\n'
    first=0
    printf '    {"name": "%s", "bytes": %d, "sha256": "%s"}' "$f" "$(stat -c %s "$dist/$f")" "$(sha "$dist/$f")"
  done
  printf '\n  ]\n}\n'
} >"$dist/index.json"
log "wrote $dist: $(ls "$dist" | wc -l) files"
