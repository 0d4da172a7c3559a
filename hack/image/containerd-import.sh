#!/usr/bin/env bash
# containerd-import.sh checks that an OCI image archive imports into containerd under the expected name, as
# a kubelet's containerd would take it: it starts a private containerd (its own root, state and socket; no
# CRI plugin), runs `ctr -n k8s.io images import ARCHIVE`, checks `ctr images ls` lists REF, and stops it.
#
#   hack/image/containerd-import.sh ARCHIVE REF
#
# Needs root and Debian's containerd package (containerd, ctr). Prints the `ctr images ls` line of REF.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 ARCHIVE REF" >&2
  exit 2
fi
archive=$(realpath "$1")
ref=$2
for tool in containerd ctr; do
  command -v "$tool" >/dev/null || { echo "containerd-import: $tool not found (apt-get install containerd)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/fabricmap-containerd-XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  # Snapshots may still be mounted by the overlayfs snapshotter.
  grep -o " $dir/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$dir/containerd.sock"
EOF
containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
pid=$!
ctr_() { ctr --address "$dir/containerd.sock" -n k8s.io "$@"; }
for _ in $(seq 100); do
  ctr_ version >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/containerd.log" >&2; echo "containerd-import: containerd exited" >&2; exit 1; }
  sleep 0.1
done
ctr_ version >/dev/null || { cat "$dir/containerd.log" >&2; exit 1; }

if ! ctr_ images import "$archive" >"$dir/import.log" 2>&1; then
  cat "$dir/import.log" >&2
  echo "containerd-import: ctr images import $archive failed" >&2
  exit 1
fi
line=$(ctr_ images ls | awk -v ref="$ref" '$1 == ref')
if [[ -z $line ]]; then
  echo "containerd-import: $ref not listed after importing $archive; ctr images ls:" >&2
  ctr_ images ls >&2
  exit 1
fi
# The import unpacked the layers into the snapshotter too (the default): the image is ready to run.
ctr_ images check "name==$ref" | awk 'NR == 1 || /complete/' >&2 || true
echo "$line"
