#!/usr/bin/env bash
# install-kubectl-plugin.sh makes `kubectl fabricmap …` work: kubectl runs any executable named kubectl-<name>
# found on PATH, and the fabricmap binary behaves as the plugin when started under that name. It builds
# bin/fabricmap when missing and links kubectl-fabricmap to it, in bin/ or in the folder given (e.g.
# ~/.local/bin, a folder on PATH). Usage: hack/install-kubectl-plugin.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/bin
dest=${1:-$bin}
if [[ ! -x $bin/fabricmap ]]; then
  echo "building $bin/fabricmap" >&2
  go build -o "$bin/fabricmap" ./cmd/fabricmap
fi
mkdir -p "$dest"
target=$bin/fabricmap
[[ $dest == "$bin" ]] && target=fabricmap # a relative link keeps bin/ movable
ln -sfn "$target" "$dest/kubectl-fabricmap"
echo "linked $dest/kubectl-fabricmap -> $target" >&2
case ":$PATH:" in
  *":$dest:"*) echo "kubectl fabricmap is ready (kubectl plugin list shows it)" >&2 ;;
  *) echo "add $dest to PATH, e.g. export PATH=\"$dest:\$PATH\", then run: kubectl fabricmap get hypernodes" >&2 ;;
esac
