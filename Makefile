# fabricmap — see README.md. `make demo` and `make test` are the two commands a fresh machine needs.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

BIN       := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export KUBEBUILDER_ASSETS := $(BIN)/k8s
GO_TEST_FLAGS ?= -count=1
FUZZTIME ?= 5000x

.PHONY: all tools build demo-build generate verify-generated docs verify-docs vet test unit e2e e2e-install node-tools kubelet-prereqs fuzz demo demo-cold demo-tools bench bench-scale clean help image release

all: build

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

tools: ## build the pinned etcd, kube-apiserver, kube-scheduler, helm, controller-gen, kueue, koord-scheduler and Volcano's scheduler and controller-manager (from ../shared/third_party) into bin/, with Koordinator's, NFD's and Volcano's CRDs (cached)
	@hack/install-tools.sh

# fabricmap-scheduler says the version of the kube-scheduler it is (scheduler/go.mod), as hack/install-tools.sh stamps kube-scheduler.
SCHEDULER_LDFLAGS := -X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36
build: ## build fabricmap's binaries into bin/, and fabricmap-scheduler from its own module (scheduler/: kube-scheduler v1.36.3 and fabricmap's plugins; about 5 min cold on 2 cores, 30 s warm)
	go build -buildvcs=auto -o $(BIN)/ ./cmd/...
	cd scheduler && go build -buildvcs=auto -ldflags "$(SCHEDULER_LDFLAGS)" -o $(BIN)/ ./cmd/fabricmap-scheduler

generate: ## regenerate deepcopy code and CRD YAML (fabricmap's own, Volcano's HyperNode, Kueue's Topology)
	@hack/install-tools.sh controller-gen
	controller-gen object paths=./api/...
	controller-gen crd paths=./api/... output:crd:dir=charts/fabricmap/files/crds
	controller-gen crd paths=volcano.sh/apis/pkg/apis/topology/v1alpha1/... output:crd:dir=charts/fabricmap/files/crds
# Kueue's packages hold all its CRDs: generate them aside and keep Topology (v1beta1 storage, v1beta2 served).
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  controller-gen crd paths=sigs.k8s.io/kueue/apis/kueue/v1beta1/... paths=sigs.k8s.io/kueue/apis/kueue/v1beta2/... output:crd:dir="$$tmp"; \
	  cp "$$tmp/kueue.x-k8s.io_topologies.yaml" charts/fabricmap/files/crds/

verify-generated: generate ## fail when a generated file is stale
	@if [ -n "$$(git status --porcelain -- api charts/fabricmap/files/crds)" ]; then \
	  git status --porcelain -- api charts/fabricmap/files/crds; \
	  echo "generated files are stale: run 'make generate' and commit the result"; exit 1; fi

docs: ## regenerate the flag tables in docs/*.md from the binaries' own --help (prose around the markers is hand-written), the chart's README from values.yaml, and the chart's label-style keys from package wellknown
	go run ./hack/tools/docs
	go run ./hack/tools/chartsurface
	go run ./hack/tools/chartreadme
	go run ./hack/tools/chartstyles

verify-docs: ## fail when a flag table in docs/ or the chart's README is stale, or the prose names a flag no binary has (part of make test)
	@go run ./hack/tools/docs -check
	@go run ./hack/tools/chartreadme -check
	@go run ./hack/tools/chartstyles -check
	@go run ./hack/tools/chartsurface -check

vet: ## go vet every package
	go vet ./...

unit: ## tests that need no control plane (those that need one skip)
	FABRICMAP_NO_CONTROL_PLANE=1 go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /test/ -e /internal/testsupport/testenv)

e2e: tools ## the whole system on a real control plane: agents in network namespaces behind LLDP switches, two aggregators (root; also part of make test)
	go test $(GO_TEST_FLAGS) -v -timeout 15m ./test/e2e/

node-tools: ## (root) what a real kubelet-backed test cluster and test/slurm need: Debian's containerd, runc, CNI plugins, iptables, lldpd, mmdebstrap, slurmctld; kubelet, kube-controller-manager, kube-proxy, kubectl; the pause image (cached)
	@hack/install-node-packages.sh
	@hack/install-tools.sh node
	@hack/image.sh pause >/dev/null

# The prerequisites of the tests on a real kubelet (test/install, test/image, internal/testsupport/testenv), built only as
# root. Without root, or when one will not install (outside CI), those tests skip and say why; under CI=true a
# failure here fails the run.
kubelet-prereqs:
	@if [ "$$(id -u)" != 0 ]; then echo "kubelet-backed tests will skip: they need root" >&2; exit 0; fi; \
	  $(MAKE) --no-print-directory node-tools image >/dev/null || { [ "$${CI:-}" != true ] && \
	  echo "kubelet-backed tests will skip: their prerequisites did not install (see above)" >&2; }

e2e-install: tools kubelet-prereqs ## (root) the chart installed for real: the image imported into a kubelet-backed cluster, helm install/test/upgrade/uninstall (also part of make test)
	go test $(GO_TEST_FLAGS) -v -timeout 20m ./test/install/

fuzz: ## a short run of every fuzz target (FUZZTIME each: an execution count such as 5000x, or a duration)
	@hack/fuzz.sh $(FUZZTIME)

.PHONY: chromium
chromium: ## install Debian's chromium for the web page's browser test, when /usr/bin/chromium is missing
	@hack/install-chromium.sh

test: tools chromium kubelet-prereqs verify-generated verify-docs vet ## unit and integration tests on a real kube-apiserver and etcd, the image and the chart on a real kubelet (root), plus a short fuzz run
	go test $(GO_TEST_FLAGS) -timeout 30m ./...
	cd hack/tools/image && go vet ./... && go test $(GO_TEST_FLAGS) ./...
	cd scheduler && go vet ./... && go test $(GO_TEST_FLAGS) -timeout 20m ./...
	@hack/fuzz.sh $(FUZZTIME)

demo: demo-tools demo-build ## start a local control plane, run the agent for simulated nodes and the aggregator, print the HyperNode tree
	$(BIN)/fabricmap-demo

# DEMO_BINARIES are what make demo runs: fabricmap-demo runs the placer inside it, and the aggregator and the CLI
# as itself (a multi-call binary, without the cloud sources and so their SDKs), and the agent from its --bin-dir.
# test/architecture reads this line: what it lists must link no cloud SDK.
DEMO_BINARIES := ./cmd/fabricmap-demo ./cmd/fabricmap-agent
demo-build: ## build only what make demo runs into bin/: fabricmap-demo (with the aggregator and the CLI, no cloud source) and fabricmap-agent
	go build -buildvcs=auto -o $(BIN)/ $(DEMO_BINARIES)

demo-cold: ## measure a new user's first make demo: a clean clone, an empty Go build cache (DEMO_COLD_ARGS=--empty-modcache: an empty module cache too), each step's time
	@hack/demo-cold.sh $(DEMO_COLD_ARGS)

demo-tools: ## what make demo runs and nothing more: etcd and kube-apiserver (cached; make test builds the rest)
	@hack/install-tools.sh etcd kube-apiserver

bench: tools ## run the benchmarks (agent, merge, capture, 10k-node convergence as root, placement and its peers); print each figure over its target, met or NOT MET, peer comparisons lost, and a verdict line; fails when a target is missed (not for an accepted trade-off)
	@export BENCH_RESULTS=$$(mktemp); trap 'rm -f "$$BENCH_RESULTS"' EXIT; a=0; b=0; \
	  BENCH_VERDICT=0 hack/bench.sh || a=$$?; BENCH_VERDICT=0 hack/bench-placement.sh || b=$$?; \
	  echo; hack/bench.sh verdict && [ $$a = 0 ] && [ $$b = 0 ]

NODES ?= 50000
bench-scale: tools ## (root) the convergence bench at NODES nodes (50000; rounded up to units of 32): cold convergence, writes, steady writes, 1 %-moved convergence, peak RSS of the aggregator, API server and etcd, ratios to the targets; fails when one is missed
	@NODES=$(NODES) hack/bench.sh scale

clean: ## remove built binaries (keeps the cached tools)
	rm -f $(BIN)/fabricmap $(BIN)/fabricmap-agent $(BIN)/fabricmap-aggregator $(BIN)/fabricmap-placer $(BIN)/fabricmap-scheduler $(BIN)/fabricmap-demo

release: ## write a release into dist/, offline: the chart package, the CLI for linux/darwin amd64/arm64 (and as a kubectl plugin, with a krew manifest), the image archive (root), checksums and an index
	@hack/release.sh

image: ## build the container image offline (mmdebstrap root filesystem + binaries, config from the Dockerfile) into bin/image/fabricmap.tar; IMAGE=repo:tag overrides the tag
	@hack/image.sh
