#!/usr/bin/env bash
# install-node-packages.sh installs the Debian packages a real kubelet-backed test cluster
# (testenv.StartKubeletCluster), the network tests and test/slurm need, each only when what it provides is
# missing:
#
#   containerd runc containernetworking-plugins iptables conntrack lldpd mmdebstrap nftables
#   slurmctld slurm-client
#
# (nftables only for its `nft` command: the cluster's Stop uses it to remove the empty tables iptables-nft
# leaves behind; iptables merely recommends it, and recommends are not installed here. slurmctld and scontrol
# (slurm-client) are for test/slurm, which runs a private slurmctld, in a network namespace of its own, on the
# topology.conf that package slurm writes; it authenticates with auth/none, so the munge they pull in stays
# unused.)
#
# Quick and silent when everything is present (no root needed then). Otherwise it needs root: it runs
# `apt-get update` once and `apt-get install -y --no-install-recommends` for the missing packages, and exits
# non-zero naming every package that would not install. Daemons in these packages (containerd, lldpd, slurmctld,
# and munged pulled in by Slurm) are not started by the installation (a temporary policy-rc.d refuses it): the
# tests start their own private instances, and an lldpd on the host's interfaces would send frames off the
# machine.
set -euo pipefail

log() { printf '[install-node-packages] %s\n' "$*" >&2; }

# present PKG succeeds when what PKG provides is already on this machine.
present() {
  case $1 in
    containerd) command -v containerd >/dev/null && command -v ctr >/dev/null ;;
    containernetworking-plugins)
      local p
      for p in bridge host-local portmap loopback; do [[ -x /usr/lib/cni/$p ]] || return 1; done ;;
    nftables) command -v nft >/dev/null ;;
    slurm-client) command -v scontrol >/dev/null ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

# Commands in /usr/sbin are missing from PATH for some non-login root shells.
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

missing=()
for p in containerd runc containernetworking-plugins iptables conntrack lldpd mmdebstrap nftables \
  slurmctld slurm-client; do
  present "$p" || missing+=("$p")
done
[[ ${#missing[@]} -gt 0 ]] || exit 0

if [[ $(id -u) -ne 0 ]]; then
  log "missing ${missing[*]}: run this script as root to install them"
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  log "missing ${missing[*]} and no apt-get on this machine: install them by hand"
  exit 1
fi

# Keep package scripts from starting the daemons (exit code 101 = action forbidden), unless a policy exists.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
log "installing ${missing[*]}"
apt-get update -qq || { log "apt-get update failed"; exit 1; }
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
  # Find out which package(s) fail, one at a time, to name them.
  failed=()
  for p in "${missing[@]}"; do
    apt-get install -y -qq --no-install-recommends "$p" >&2 || failed+=("$p")
  done
  if [[ ${#failed[@]} -gt 0 ]]; then
    log "could not install: ${failed[*]}"
    exit 1
  fi
fi
for p in "${missing[@]}"; do
  if ! present "$p"; then
    log "package $p installed but what it provides is still missing"
    exit 1
  fi
done
log "installed ${missing[*]}"
