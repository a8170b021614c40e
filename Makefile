# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# draext: KEP-5004 (DRA extended resources) as a patch series on Kubernetes.
# A thin Makefile: every target delegates to one script under scripts/ (by job:
# series/, build/, cluster/, kind/, test/; knobs in scripts/lib/config.sh).
# `make help` lists the targets by section.

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

export RELEASE_BRANCH ?= v1.33
export TOPIC
export UPSTREAM_DRIVER_VERSION
export WHAT
export SPEC
export KUBE_SRC
export KUBE_GIT_REMOTE
export NODES
export PURGE
export FEATURE_GATES
export KUBELET_FEATURE_GATES
export KBIN
export E2E_ARGS
export E2E_DRILL_CHURN_PODS
export E2E_DRILL_APISERVER_PODS
export SKIP_CLUSTER
export DOCKER
export DRIVER
export ONLINE
export KIND_CONFIG
export KEEP_DOCKER
export ARGS
export NODE_IMAGE
export PREFIX
export RELEASE_DIR
export KEEP_KIND

.PHONY: help test unit verify e2e e2e-upstream upstream-table drills upgrade-test upstream-upgrade-test perf perf-upstream fetch patches-apply patches-export patches-verify patches-bisect pr-branches generate generate-check-base generate-verify build build-base build-upstream check-gates etcd driver-image staging staging-sums release release-check test-kind kind-upgrade-test kubectl-plugin clean-upstream clean cluster-deps up down migrate migrate-demo ctl demo start-latency quota-burst upstream-driver docker-up docker-down kind-base node-image kind-up kind-down

################################################################################
# =================================== Help ====================================
##@ Help

help: ## List the targets by section
	@awk 'BEGIN {FS = ":.*## "} /^##@ / {printf "\n%s\n", substr($$0, 5)} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-20s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

################################################################################
# ================================= Testing ===================================
##@ Testing

test: ## Run all tests: make unit, make verify, gofmt/vet and in-tree tests of changed packages, local cluster + e2e
	@bash scripts/test/test.sh

unit: ## Unit tests of draext's own code (go vet, go test, scripts/lib/lib_test.sh): no root, no cluster, minutes
	@bash scripts/test/unit.sh

verify: ## Static checks: gofmt, license headers, shellcheck, golangci-lint, logcheck, patches-verify, staging go.sum
	@bash scripts/test/verify.sh

e2e: ## Run the Ginkgo e2e suite against KUBECONFIG (default: the local cluster)
	@bash scripts/test/e2e.sh

drills: ## On a running cluster (make up NODES=3): the drills under load and faults, one line of figures each (E2E_ARGS=-ginkgo.focus=D2)
	@bash scripts/test/drills.sh

e2e-upstream: ## The e2e suite against a local cluster of stock VERSION=v1.3x.y binaries (built when missing); results with their date in docs/e2e-upstream/VERSION.md (FOCUS=regex, reaching the script through the environment, $$ for a $: only those specs, their rows replaced; FORWARD=1: the release with its forward series, patches/v1.MM, into docs/e2e-upstream/VERSION-forward.md)
	@test -n "$(VERSION)" || { echo "make e2e-upstream: set VERSION, e.g. VERSION=v1.35.4" >&2; exit 2; }
	@UPSTREAM="$(VERSION)" bash scripts/test/e2e-upstream.sh

upstream-table: ## Write the release columns of the README table "What works, against upstream" from docs/e2e-upstream/v*.md (specs tied to rows by labels row:KEY)
	@bash scripts/test/upstream-table.sh

upgrade-test: ## Stock v1.33.13 cluster (make build-base) upgraded to the patched binaries with pods running, gate on, downgrade losses measured
	@bash scripts/test/upgrade-test.sh

upstream-upgrade-test: ## A draext cluster with pods running moved to stock 1.34.4, 1.35.4, 1.36.3, 1.37.2 in turn (UPSTREAM_VERSIONS=); figures per step
	@bash scripts/test/upstream-upgrade-test.sh

perf: ## scheduler_perf: DRA extended resources next to claim-template and device-plugin baselines, throughput, CPU per pod by component, extension points (ROUNDS=5, WORKLOADS=, SCALING=1)
	@bash scripts/test/perf.sh

perf-upstream: ## scheduler_perf: draext beside stock v1.37.2 on v1.37.2's own extended resource workloads, measured the same way (ROUNDS=5, WORKLOADS=explicit implicit claimtemplate, REPORT=)
	@bash scripts/test/perf-upstream.sh

################################################################################
# ================================ The series =================================
##@ The series

fetch: ## Get pristine upstream source into _output/kubernetes (module proxy; KUBE_SRC= or KUBE_GIT_REMOTE= for git)
	@bash scripts/series/fetch-upstream.sh

patches-apply: ## Apply the series with git am -3 onto branch draext of _output/kubernetes
	@bash scripts/series/patches-apply.sh

patches-export: ## Rewrite patches/$(RELEASE_BRANCH) from branch draext, normalised; file numbers stay (RENUMBER=N renumbers N, 2N, ...)
	@bash scripts/series/patches-export.sh

patches-verify: ## Replay the series on a pristine base, re-export and compare bytes; check metadata
	@bash scripts/series/patches-verify.sh

pr-branches: ## One branch per topic (pr/NN-<topic>) in the tree, stacked on the base tag, each proposal topic's description in _output/pr; RELEASE_BRANCH=v1.37: each topic alone on v1.37.2, built and tested alone (TOPIC=<id>: one)
	@bash scripts/series/pr-branches.sh

patches-bisect: ## Apply the series patch by patch and type-check what it changed after each
	@bash scripts/series/patches-bisect.sh

generate: ## Regenerate upstream's generated code in _output/kubernetes with its own generators (SPEC=0: no openapi-spec)
	@bash scripts/series/generate.sh

generate-check-base: ## Prove the generator setup: regenerating the pristine base must give zero diff
	@bash scripts/series/generate-verify.sh base

generate-verify: ## Prove the generated patches are current: regenerating draext must give zero diff
	@bash scripts/series/generate-verify.sh draext

################################################################################
# ================================= Building ==================================
##@ Building

build: ## Build patched binaries into _output/bin (WHAT="kubelet kubectl" for a subset)
	@bash scripts/build/build.sh

build-base: ## Build unpatched v1.33.13 (worktree at the tag) into _output/base/bin, for make up KBIN= and upgrade-test
	@BASE=1 WHAT="$${WHAT:-kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl}" bash scripts/build/build.sh

build-upstream: ## Build a stock release of any minor from the Go module proxy (VERSION=v1.34.4) into _output/upstream/VERSION/bin, for make up KBIN=
	@test -n "$(VERSION)" || { echo "make build-upstream: set VERSION, e.g. VERSION=v1.34.4" >&2; exit 2; }
	@UPSTREAM="$(VERSION)" WHAT="$${WHAT:-kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl}" bash scripts/build/build.sh

check-gates: ## Check that the built server binaries accept --feature-gates=DRAExtendedResource=true
	@bash scripts/build/check-gates.sh

etcd: ## Build etcd 3.5.24 from the Go module proxy into _output/tools/etcd
	@bash scripts/build/install-etcd.sh

driver-image: ## Build the example driver image as an OCI archive (DOCKER=1: docker build)
	@bash scripts/build/driver-image.sh

staging: ## Export the patched k8s.io staging modules as v0.33.13-draext.N into a file module proxy (_output/staging)
	@bash scripts/build/staging.sh

staging-sums: ## Export, then rewrite the draext lines of e2e/, staging/example/ and compat/draextside/ go.sum (commit them)
	@bash scripts/build/staging.sh --sums

release: ## Build _output/release/v1.33.13-draext.N: binaries, image archives (ctr import, docker load), overlays, kubeadm config, README, SHA256SUMS; no Docker
	@bash scripts/build/release.sh

test-kind: ## The release on a multi-node offline kind cluster (node image from the release, pod network, driver), the e2e suite with the KEP-5004 and cross-node specs required, then kind-down (KEEP_KIND=1 keeps it)
	@bash scripts/test/test-kind.sh

kind-upgrade-test: ## kubeadm upgrade on kind: stock v1.33.13 (BASE=1 node image), GPU pods running, upgrade apply to the release, kubelets replaced, the gate on component by component; the runbook of docs/upgrades.md (KEEP_KIND=1 keeps it)
	@bash scripts/test/kind-upgrade-test.sh

release-check: ## Check make release's output as a user would: SHA256SUMS, ctr images import and run, docker load and run (SKIP_DOCKER=1), kubeadm config
	@bash scripts/test/release-check.sh

kubectl-plugin: ## Build kubectl-draext into _output/bin and symlink it into /usr/local/bin (PREFIX=~/.local: into ~/.local/bin)
	@bash scripts/build/kubectl-plugin.sh

clean-upstream: ## Remove _output/kubernetes after checking it holds no unexported work
	@bash scripts/build/clean.sh upstream

clean: ## Remove _output (binaries, trees, tools) after the same check
	@bash scripts/build/clean.sh all

################################################################################
# ============================ The local cluster ==============================
##@ The local cluster

cluster-deps: ## Install/build what the local cluster needs besides Kubernetes (containerd, CNI, crictl, images)
	@bash scripts/cluster/deps.sh

up: ## Start the local cluster with the example driver (NODES=2: the last node runs the device plugin)
	@bash scripts/cluster/up.sh

down: ## Stop the local cluster (PURGE=1 also wipes its state)
	@bash scripts/cluster/down.sh

migrate: ## Move a node of the running cluster between device plugin and DRA with pods running (MIGRATE_NODE=2 MIGRATE_TO=dra|device-plugin)
	@bash scripts/cluster/migrate.sh

migrate-demo: ## On make up NODES=2: move the device-plugin node to DRA with a device-plugin pod running, and back
	@bash scripts/cluster/migrate-demo.sh

ctl: ## Control one component of the local cluster: make ctl ARGS="restart kubelet1" (list, find, args, start, stop, signal, restart, wait)
	@bash scripts/cluster/ctl.sh $(ARGS)

demo: ## On a running cluster: a GPU through a ResourceClaim, then through nvidia.com/gpu
	@bash scripts/cluster/demo.sh

start-latency: ## On a running cluster: apply-to-Ready of the nvidia.com/gpu pod next to the claim-template pod (RUNS=10, medians)
	@bash scripts/cluster/start-latency.sh

upstream-driver: ## On a running cluster: kubernetes-sigs/dra-example-driver (UPSTREAM_DRIVER_VERSION=v0.4.0, d-r-a v0.36.2) built unmodified, on node 1; checks its slice (no write loop) and two unchanged pods with disjoint devices
	@bash scripts/cluster/upstream-driver.sh

quota-burst: ## On a running cluster: PODS=50 short nvidia.com/gpu pods one after another under a quota of the cluster's GPUs; checks no claim is left and 0 used
	@bash scripts/cluster/quota-burst.sh

################################################################################
# =================================== kind ====================================
##@ kind

docker-up: ## Start draext's own Docker engine for the kind targets (Debian docker.io, private socket, no pulls)
	@bash scripts/kind/docker-engine.sh up

docker-down: ## Stop the Docker engine that docker-up started
	@bash scripts/kind/docker-engine.sh down

kind-base: ## Build the offline kind base image localhost/draext/kind-base:bookworm (debootstrap; needs docker-up)
	@bash scripts/kind/base-image.sh

node-image: ## Build the kind node image localhost/draext/kind-node:<version> (offline; ONLINE=1: kindest/base and fetched images; BASE=1: stock v1.33.13)
	@bash scripts/kind/node-image.sh

kind-up: ## Create kind cluster "draext" from the node image, with the example driver (KIND_CONFIG=, ONLINE=1)
	@bash scripts/kind/cluster.sh up

kind-down: ## Delete the kind cluster and clean up what kind and Docker left (KEEP_DOCKER=1 keeps the engine)
	@bash scripts/kind/cluster.sh down
