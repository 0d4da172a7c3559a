#!/usr/bin/env bash
# install-tools.sh builds the pinned tools fabricmap's tests and demo need, from Go module sources,
# into a git-ignored cache (bin/ by default). A tool already built at its pinned version is reused.
#
#   hack/install-tools.sh [etcd] [kube-apiserver] [kube-scheduler] [helm] [controller-gen] [kueue] [koord]
#                         [nfd-crds] [prom-crds] [volcano] [kubelet] [kube-controller-manager] [kube-proxy] [kubectl] [node]
#
# With no argument it installs what `make test` needs (kube-scheduler too: the placer's tests bind pods with it;
# kueue: test/kueue runs Kueue's controller manager on fabricmap's Kueue Topology; koord: koord-scheduler and
# the CRDs of Koordinator's module, for test/koordinator; nfd-crds: NodeFeatureDiscovery's CRDs from its module,
# for the --node-features output's tests; prom-crds: the Prometheus Operator's ServiceMonitor and PrometheusRule
# CRDs, for the chart's monitoring objects; volcano: Volcano's scheduler and controller-manager with its CRDs, built
# from the source tarball in ../shared/third_party, for test/volcano). Progress goes to stderr
# because a cold build takes minutes.
# `node` is the set a real kubelet-backed cluster (testenv.StartKubeletCluster) needs on top of that: kubelet,
# kube-controller-manager and kube-proxy (and etcd, kube-apiserver, kube-scheduler), and kubectl, through which
# the chart install test runs the fabricmap kubectl plugin. That cluster also needs
# Debian packages: hack/install-node-packages.sh.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/bin}
ETCD_VERSION=v3.6.8
KUBE_VERSION=v1.36.3
HELM_VERSION=v3.22.0
# HELM_BUILD names how helm is built on top of its version; change it to make every machine build helm again
# (r2: stamped like helm's own release, see helm_out).
HELM_BUILD=r2
CONTROLLER_GEN_VERSION=v0.23.0
# KUEUE_VERSION must match the require line of hack/tools/kueue/go.mod (checked before building).
KUEUE_VERSION=v0.15.0
# KOORD_VERSION must match the require line of hack/tools/koord/go.mod (checked before building).
KOORD_VERSION=v1.7.0
NFD_VERSION=v0.18.2
PROM_OPERATOR_VERSION=v0.82.0
# VOLCANO_VERSION names the Volcano source in ../shared/third_party (VOLCANO_TARBALL): the proxy does not serve
# volcano.sh/volcano, so its scheduler and controller-manager are built from that tarball (test/volcano).
VOLCANO_VERSION=ed72c7c81
VOLCANO_TARBALL=${VOLCANO_TARBALL:-$root/../shared/third_party/volcano-$VOLCANO_VERSION.tar.xz}

mkdir -p "$BIN/k8s"
log() { printf '[install-tools] %s\n' "$*" >&2; }

# build NAME VERSION CMD... runs CMD to produce $BIN/NAME-VERSION unless it exists, then links $BIN/NAME to it.
# The link is replaced in one rename, so a tool in use by another process is never missing.
build() {
  local name=$1 version=$2; shift 2
  local target="$BIN/$name-$version"
  # One builder per tool at a time: a second caller waits for the first and then reuses its result.
  exec {lock}>"$target.lock"
  flock "$lock"
  if [[ ! -x $target ]]; then
    log "building $name $version (first time only; this can take several minutes)…"
    local start=$SECONDS
    "$@" "$target.tmp"
    mv "$target.tmp" "$target"
    log "built $name $version in $((SECONDS - start))s"
  fi
  ln -sfn "$(basename "$target")" "$BIN/.$name.link.$$"
  mv -Tf "$BIN/.$name.link.$$" "$BIN/$name"
  exec {lock}>&-
}

kube_build() { # kube_build PKG OUT
  (cd "$root/hack/tools/kube" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36" \
    -o "$2" "$1")
}
etcd_out() { kube_build go.etcd.io/etcd/server/v3 "$1"; }
apiserver_out() { kube_build k8s.io/kubernetes/cmd/kube-apiserver "$1"; }
scheduler_out() { kube_build k8s.io/kubernetes/cmd/kube-scheduler "$1"; }
kubelet_out() { kube_build k8s.io/kubernetes/cmd/kubelet "$1"; }
controller_manager_out() { kube_build k8s.io/kubernetes/cmd/kube-controller-manager "$1"; }
proxy_out() { kube_build k8s.io/kubernetes/cmd/kube-proxy "$1"; }
kubectl_out() { kube_build k8s.io/kubernetes/cmd/kubectl "$1"; }
gobin_install() { # gobin_install MODULE@VERSION BINNAME OUT [LDFLAGS...]
  local tmp; tmp=$(mktemp -d)
  GOBIN=$tmp CGO_ENABLED=0 go install -trimpath -ldflags "-s -w ${*:4}" "$1"
  mv "$tmp/$2" "$3"; rm -rf "$tmp"
}
# helm_out builds helm stamped as helm's own release build is (its Makefile's LDFLAGS): the version, a clean
# tree, and the Kubernetes version it assumes without a cluster (`helm template`, `helm lint`: the chart's
# kubeVersion is checked against it), which is that of the client-go helm is built with (v0.X.Y: 1.X). An
# unstamped build says v3.22 and assumes Kubernetes v1.20.
helm_out() {
  local gomod k8s outside
  # Asked outside any module, so that fabricmap's go.mod and go.sum stay as they are.
  outside=$(mktemp -d)
  gomod=$(cd "$outside" && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n -E 's/^[[:space:]]*"GoMod": "(.*)",?$/\1/p')
  rmdir "$outside"
  k8s=$(sed -n -E 's/^[[:space:]]*k8s\.io\/client-go v0\.([0-9]+)\..*/\1/p' "$gomod")
  [[ -n $k8s ]] || { log "no k8s.io/client-go in helm $HELM_VERSION's go.mod ($gomod)"; exit 1; }
  local x=helm.sh/helm/v3
  gobin_install "$x/cmd/helm@$HELM_VERSION" helm "$1" \
    "-X $x/internal/version.version=$HELM_VERSION -X $x/internal/version.gitTreeState=clean" \
    "-X $x/pkg/lint/rules.k8sVersionMajor=1 -X $x/pkg/lint/rules.k8sVersionMinor=$k8s" \
    "-X $x/pkg/chartutil.k8sVersionMajor=1 -X $x/pkg/chartutil.k8sVersionMinor=$k8s"
}
# kueue_out builds Kueue's controller manager from its own tools module (hack/tools/kueue), stamped with its
# version as Kueue's Makefile does.
kueue_out() {
  local mod=$root/hack/tools/kueue
  grep -q "^require sigs.k8s.io/kueue $KUEUE_VERSION\$" "$mod/go.mod" ||
    { log "hack/tools/kueue/go.mod does not require sigs.k8s.io/kueue $KUEUE_VERSION"; exit 1; }
  (cd "$mod" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
    -o "$1" sigs.k8s.io/kueue/cmd/kueue)
}
# koord_module checks that hack/tools/koord pins Koordinator at KOORD_VERSION; its replace lines hold
# Koordinator's Kubernetes 1.28 set apart from fabricmap's.
koord_module() {
  local pinned
  pinned=$(cd "$root/hack/tools/koord" && go list -m -f '{{.Version}}' github.com/koordinator-sh/koordinator)
  [[ $pinned == "$KOORD_VERSION" ]] ||
    { log "hack/tools/koord/go.mod pins Koordinator $pinned, this script $KOORD_VERSION"; exit 1; }
}
koord_scheduler_out() {
  koord_module
  (cd "$root/hack/tools/koord" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
    -o "$1" github.com/koordinator-sh/koordinator/cmd/koord-scheduler)
}
# koord_crds_out copies the CRDs Koordinator's module ships (config/crd/bases) into the folder $1.
koord_crds_out() {
  koord_module
  local dir
  dir=$(cd "$root/hack/tools/koord" && go mod download -json "github.com/koordinator-sh/koordinator@$KOORD_VERSION" |
    sed -n -E 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  [[ -d $dir/config/crd/bases ]] || { log "no config/crd/bases in Koordinator $KOORD_VERSION ($dir)"; exit 1; }
  rm -rf "$1"
  mkdir "$1"
  cp "$dir"/config/crd/bases/*.yaml "$1/"
  chmod u+w "$1"/*.yaml
}
# nfd_crds_out copies the CRDs NodeFeatureDiscovery's module ships (deployment/base/nfd-crds) into the folder $1:
# the NodeFeature CRD the aggregator's --node-features output is checked against (test/outputs).
nfd_crds_out() {
  local dir
  dir=$(cd "$root" && go mod download -json "sigs.k8s.io/node-feature-discovery@$NFD_VERSION" |
    sed -n -E 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  [[ -f $dir/deployment/base/nfd-crds/nfd-api-crds.yaml ]] || { log "no deployment/base/nfd-crds in NFD $NFD_VERSION ($dir)"; exit 1; }
  rm -rf "$1"
  mkdir "$1"
  cp "$dir"/deployment/base/nfd-crds/nfd-api-crds.yaml "$1/"
  chmod u+w "$1"/*.yaml
}
# prom_crds_out copies the ServiceMonitor and PrometheusRule CRDs of the Prometheus Operator's module
# (example/prometheus-operator-crd) into the folder $1: the chart's monitoring objects are checked against them.
prom_crds_out() {
  local dir
  dir=$(cd "$root" && go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROM_OPERATOR_VERSION" |
    sed -n -E 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  local crds=$dir/example/prometheus-operator-crd
  [[ -d $crds ]] || { log "no example/prometheus-operator-crd in the Prometheus Operator $PROM_OPERATOR_VERSION ($dir)"; exit 1; }
  rm -rf "$1"
  mkdir "$1"
  cp "$crds"/monitoring.coreos.com_servicemonitors.yaml "$crds"/monitoring.coreos.com_prometheusrules.yaml "$1/"
  chmod u+w "$1"/*.yaml
}
# volcano_src unpacks Volcano's source once into $BIN/src/volcano-VERSION and prints that folder.
volcano_src() {
  local dir=$BIN/src/volcano-$VOLCANO_VERSION
  if [[ ! -f $dir/go.mod ]]; then
    [[ -f $VOLCANO_TARBALL ]] || { log "Volcano's source is missing: $VOLCANO_TARBALL (shared/third_party)"; exit 1; }
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    tar -xJf "$VOLCANO_TARBALL" -C "$dir.tmp" --strip-components=1
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  printf '%s\n' "$dir"
}
# volcano_out builds Volcano's scheduler and controller-manager into the folder $1 (vc-scheduler,
# vc-controller-manager) and copies its CRDs (Volcano's own and its jobflow ones) into $1/crds.
volcano_out() {
  local src; src=$(volcano_src)
  mkdir -p "$1/crds"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$1/vc-scheduler" ./cmd/scheduler)
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$1/vc-controller-manager" ./cmd/controller-manager)
  cp "$src"/config/crd/volcano/bases/*.yaml "$src"/config/crd/jobflow/bases/*.yaml "$1/crds/"
  chmod u+w "$1"/crds/*.yaml
}
cgen_out() { gobin_install "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION" controller-gen "$1"; }

tools=()
for a in "$@"; do
  case $a in
    node) tools+=(etcd kube-apiserver kube-scheduler kubelet kube-controller-manager kube-proxy kubectl) ;;
    *) tools+=("$a") ;;
  esac
done
[[ ${#tools[@]} -gt 0 ]] || tools=(etcd kube-apiserver kube-scheduler helm controller-gen kueue koord nfd-crds prom-crds volcano)
for t in "${tools[@]}"; do
  case $t in
    etcd) build etcd "$ETCD_VERSION" etcd_out ;;
    kube-apiserver) build kube-apiserver "$KUBE_VERSION" apiserver_out ;;
    kube-scheduler) build kube-scheduler "$KUBE_VERSION" scheduler_out ;;
    kubelet) build kubelet "$KUBE_VERSION" kubelet_out ;;
    kube-controller-manager) build kube-controller-manager "$KUBE_VERSION" controller_manager_out ;;
    kube-proxy) build kube-proxy "$KUBE_VERSION" proxy_out ;;
    kubectl) build kubectl "$KUBE_VERSION" kubectl_out ;;
    helm) build helm "$HELM_VERSION-$HELM_BUILD" helm_out ;;
    controller-gen) build controller-gen "$CONTROLLER_GEN_VERSION" cgen_out ;;
    kueue) build kueue "$KUEUE_VERSION" kueue_out ;;
    nfd-crds) build nfd-crds "$NFD_VERSION" nfd_crds_out ;;
    prom-crds) build prom-crds "$PROM_OPERATOR_VERSION" prom_crds_out ;;
    volcano) build volcano "$VOLCANO_VERSION" volcano_out ;;
    koord)
      build koord-scheduler "$KOORD_VERSION" koord_scheduler_out
      build koord-crds "$KOORD_VERSION" koord_crds_out
      ;;
    *) log "unknown tool $t"; exit 2 ;;
  esac
done
# envtest (KUBEBUILDER_ASSETS) wants etcd and kube-apiserver side by side under plain names; the kubelet
# cluster looks for its node binaries in the same folder.
for t in etcd kube-apiserver kube-scheduler kubelet kube-controller-manager kube-proxy; do
  [[ -e $BIN/$t ]] && ln -sf "../$t" "$BIN/k8s/$t"
done
exit 0
