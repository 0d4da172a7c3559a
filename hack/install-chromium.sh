#!/usr/bin/env bash
# install-chromium.sh installs Debian's chromium, which the web page's browser test (view/web) drives headless,
# unless /usr/bin/chromium is already there. It needs root (or sudo) and Debian's package sources.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then
  exit 0
fi
sudo=()
if [[ $(id -u) != 0 ]]; then
  sudo=(sudo)
fi
echo "installing chromium for the web page's browser test (apt-get)" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq chromium >&2
