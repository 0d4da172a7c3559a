#!/usr/bin/env bash
# build-binaries.sh builds fabricmap's release binaries, the ones the container image ships, into OUTDIR.
# The Dockerfile's builder stage and the offline build (hack/image.sh) both run this script, so the two
# images carry binaries built the same way.
#
#   hack/image/build-binaries.sh OUTDIR
#
# Environment:
#   VERSION   the release version stamped into the binaries (default: dev)
#   REVISION  the source revision stamped into the binaries (default: unknown)
#   GOFLAGS, GOCACHE, GOMODCACHE ... are honoured as usual.
#
# Every binary is built with -trimpath and stripped (-s -w), with cgo: go-nvml binds libnvidia-ml.so.1 through
# dlopen at run time, so the agent and the CLI link against the image's glibc. fabricmap-aggregator and
# fabricmap-placer are links to the fabricmap binary, which runs them by the name it is started as (see
# cmd/fabricmap): the three share the Kubernetes libraries, and one binary instead of three saves about 60 MB.
# The agent stays a binary of its own: it runs on every node, and its memory is kept small.
# fabricmap-scheduler comes from its own module (scheduler/: kube-scheduler and fabricmap's plugins, on the
# Kubernetes version of k8s.io/kubernetes in scheduler/go.mod), static (no cgo: it loads no NVML), stripped too,
# and says that kube-scheduler version as `make build` stamps it.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
version=${VERSION:-dev}
revision=${REVISION:-unknown}

# The -X targets are the version and revision of internal/version, the one home of every binary's --version
# (unset, it falls back to the Go build info, then to dev / unknown).
ldflags="-s -w -X github.com/fabricmap/fabricmap/internal/version.version=$version -X github.com/fabricmap/fabricmap/internal/version.revision=$revision"
# go-nvml's cgo prologue references functions NVML marks deprecated; the warnings say nothing about this build.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"

mkdir -p "$out"
out=$(cd "$out" && pwd)

# Not fabricmap-demo: it is a development tool, not part of the image.
cd "$root"
CGO_ENABLED=1 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/" \
  ./cmd/fabricmap-agent ./cmd/fabricmap
for name in fabricmap-aggregator fabricmap-placer; do
  ln -sfn fabricmap "$out/$name"
done

cd "$root/scheduler"
kube=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
[[ $kube =~ ^v([0-9]+)\.([0-9]+)\. ]] || { echo "$0: k8s.io/kubernetes $kube in scheduler/go.mod is no release version" >&2; exit 1; }
sldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube -X k8s.io/component-base/version.gitMajor=${BASH_REMATCH[1]} -X k8s.io/component-base/version.gitMinor=${BASH_REMATCH[2]}"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$sldflags" -o "$out/" ./cmd/fabricmap-scheduler
