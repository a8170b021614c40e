# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Every knob of the scripts, declared once with its default and what it does,
# and every version they pin. common.sh sources this file; set any of these in
# the environment (or on the make command line: make up NODES=2) to change it.
# An empty default means "derived", as the comment says.
# shellcheck disable=SC2034 # the settings are for the scripts that source this file

# --- versions -----------------------------------------------------------------

# Go: the oldest release the scripts and our own modules need (the hint of
# need_base_tools, the go line of the etcd build module in build/install-etcd.sh).
GO_MIN_VERSION=${GO_MIN_VERSION:-1.24}

# Local cluster (cluster/deps.sh).
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.1.9} # CDI support; Debian's containerd 1.6 has none
CRICTL_VERSION=${CRICTL_VERSION:-v1.34.0}
CNI_VERSION=${CNI_VERSION:-v1.6.2} # containernetworking/plugins: bridge, host-local, loopback
PAUSE_TAG=${PAUSE_TAG:-3.10}       # localhost/draext/pause, built from the tree's build/pause
BUSYBOX_TAG=${BUSYBOX_TAG:-1.35}   # localhost/draext/busybox, from Debian's busybox-static

# etcd: what Kubernetes v1.33 tests with (build/install-etcd.sh, series/generate.sh).
ETCD_VERSION=${ETCD_VERSION:-3.5.24}

# Code generation (series/generate.sh): what upstream pins.
GOIMPORTS_VERSION=${GOIMPORTS_VERSION:-v0.26.0} # golang.org/x/tools/cmd/goimports
GOGO_PROTOBUF_VERSION=${GOGO_PROTOBUF_VERSION:-v1.3.2}
# The protoc that upstream's hack/lib/protoc.sh insists on; generate.sh's shim
# answers its version check with it (Debian's 3.21.12 writes the same bytes).
PROTOC_VERSION=${PROTOC_VERSION:-23.4}

# kind (kind/base-image.sh, kind/node-image.sh): the release that pairs with 1.33.
KIND_VERSION=${KIND_VERSION:-v0.29.0}
LOCAL_PATH_PROVISIONER_VERSION=${LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30}
# The Debian release of the offline kind base image (debootstrap, its tag
# localhost/draext/kind-base:<suite>) and of kube-proxy's base with ONLINE=1.
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}

# Static checks (test/verify.sh).
SHELLCHECK_VERSION=${SHELLCHECK_VERSION:-0.9.0}            # Debian bookworm's shellcheck package
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}    # github.com/golangci/golangci-lint/v2, built with our Go
LOGCHECK_VERSION=${LOGCHECK_VERSION:-v0.11.0}              # sigs.k8s.io/logtools/logcheck

# --- the series and the upstream tree -------------------------------------------

# Which release directory of patches/ we work on: v1.33 (the series) or v1.37
# (the forward series: changes upstream still lacks, against v1.37.2, each
# topic its own branch on the base; docs/upstreaming.md).
RELEASE_BRANCH=${RELEASE_BRANCH:-v1.33}
[[ $RELEASE_BRANCH =~ ^v1\.[0-9]+$ ]] || { echo "ERROR: RELEASE_BRANCH=$RELEASE_BRANCH: use v1.33 or v1.37 (a folder of patches/)" >&2; exit 2; }
PATCH_DIR=${PATCH_DIR:-$DRAEXT_ROOT/patches/$RELEASE_BRANCH}
# Where the trees and binaries of a release directory other than v1.33 live
# (_output/v1.37/...): the series' own paths stay as they were.
SERIES_OUT=${SERIES_OUT:-}
[[ -n $SERIES_OUT || $RELEASE_BRANCH == v1.33 ]] || SERIES_OUT=/$RELEASE_BRANCH
# make pr-branches of an independent series (the forward series): only this topic.
TOPIC=${TOPIC:-}
# make patches-export keeps every patch's file number (gaps allowed); RENUMBER=N
# numbers the whole series N, 2N, ... once, where a new patch finds no free number.
RENUMBER=${RENUMBER:-}
# Everything the scripts fetch, build and run lives here (git-ignored).
OUTPUT_DIR=${OUTPUT_DIR:-$DRAEXT_ROOT/_output}
# The upstream tree: pristine base commit tagged GIT_TAG, series on branch draext.
KUBE_TREE=${KUBE_TREE:-$OUTPUT_DIR$SERIES_OUT/kubernetes}
# make fetch from a git checkout or remote instead of the module proxy (empty: the proxy).
KUBE_SRC=${KUBE_SRC:-}
KUBE_GIT_REMOTE=${KUBE_GIT_REMOTE:-}
# The tree that make generate regenerates (the upstream tree; generate-verify sets a worktree).
TREE=${TREE:-$KUBE_TREE}
# SPEC=0: make generate skips the OpenAPI spec (minutes faster).
SPEC=${SPEC:-1}
# FORCE=1: make clean removes the upstream tree even when it holds unexported work.
FORCE=${FORCE:-0}

# --- builds ------------------------------------------------------------------------

# The patched binaries (make build) and the tools the scripts build.
BIN_DIR=${BIN_DIR:-$OUTPUT_DIR$SERIES_OUT/bin}
# make build: which binaries (empty: all six plus kubeadm; e.g. WHAT="kubelet kubectl").
WHAT=${WHAT:-}
# make build-base (BASE=1): the unpatched GIT_TAG, built from a worktree of the
# upstream tree at the tag into its own directory (for make up KBIN=... and
# make upgrade-test).
BASE=${BASE:-0}
BASE_TREE=${BASE_TREE:-$OUTPUT_DIR/base/kubernetes}
BASE_BIN_DIR=${BASE_BIN_DIR:-$OUTPUT_DIR/base/bin}
# make build-upstream VERSION=v1.3x.y (UPSTREAM=...): stock releases of any minor,
# each assembled from the Go module proxy and built into UPSTREAM_DIR/<version>/bin.
UPSTREAM=${UPSTREAM:-}
UPSTREAM_DIR=${UPSTREAM_DIR:-$OUTPUT_DIR/upstream}
# check-gates: whether the binaries must accept (accepted) or refuse (rejected) the gate.
EXPECT=${EXPECT:-accepted}
# make driver-image: the example driver's image tag; DOCKER=1 builds it with docker build.
IMAGE=${IMAGE:-localhost/draext/draext-gpu:dev}
DOCKER=${DOCKER:-0}

# --- the local cluster (make up, make down) -------------------------------------------

# Node count, 1 to 9. With two or more, the last node runs the device plugin.
NODES=${NODES:-1}
# host: the driver as host processes; daemonset (NODES=1): from overlays/local.
DRIVER=${DRIVER:-host}
# The gates of every component; KUBELET_FEATURE_GATES go to the kubelets only,
# after FEATURE_GATES (the later value of a gate wins). The kubelet default
# makes the PodResources API report DRA devices, which the e2e suite reads.
# With stock binaries (KBIN=_output/base/bin) make up leaves DRAExtendedResource
# out of the default, which they would refuse; with stock binaries of a later
# release (make build-upstream) every default gate that release no longer knows.
DEFAULT_FEATURE_GATES=DynamicResourceAllocation=true,DRAExtendedResource=true,DRADeviceTaints=true
FEATURE_GATES=${FEATURE_GATES:-$DEFAULT_FEATURE_GATES}
DEFAULT_KUBELET_FEATURE_GATES=KubeletPodResourcesDynamicResources=true
KUBELET_FEATURE_GATES=${KUBELET_FEATURE_GATES:-$DEFAULT_KUBELET_FEATURE_GATES}
# The example driver's mock NVML profile (8 GPUs per node with dgxa100).
MOCK_PROFILE=${MOCK_PROFILE:-dgxa100}
# The drivers' health services listen on 127.0.0.1:<base + node>. The base is
# below the kernel's ephemeral port range (32768-60999 here): a port in it can
# be taken at any moment as the source port of some outgoing connection, and a
# driver's health service then fails with "address already in use".
HEALTH_PORT_BASE=${HEALTH_PORT_BASE:-19515}
# Kubernetes binaries for the cluster (empty: the patched ones in BIN_DIR, rebuilt
# when stale). Stock ones (make build-base: KBIN=_output/base/bin) run without
# DRAExtendedResource and with a DeviceClass without extendedResourceName.
KBIN=${KBIN:-}
# State on short, absolute paths (unix sockets, kubelet root dirs, cgroups).
STATE_DIR=${STATE_DIR:-/var/lib/draext-cluster}
RUN_DIR=${RUN_DIR:-/run/draext-cluster}
# make migrate: which node (empty: the last) moves to which mode (dra or device-plugin).
MIGRATE_NODE=${MIGRATE_NODE:-}
MIGRATE_TO=${MIGRATE_TO:-dra}
# PURGE=1: make down also wipes the cluster's state (etcd, kubelet and containerd roots, pki).
PURGE=${PURGE:-0}

# --- the cluster's checks (make demo, start-latency, quota-burst) ---------------------

# start-latency: how many pod pairs; quota-burst: how many pods, under a quota of
# GPUS (empty: every DRA device of the cluster).
RUNS=${RUNS:-10}
# make upstream-driver: the version of sigs.k8s.io/dra-example-driver (v0.4.0:
# k8s.io/dynamic-resource-allocation v0.36.2) run unmodified on node 1.
UPSTREAM_DRIVER_VERSION=${UPSTREAM_DRIVER_VERSION:-v0.4.0}
PODS=${PODS:-50}
GPUS=${GPUS:-}

# --- tests (make test, make e2e, make perf) -------------------------------------------

# SKIP_CLUSTER=1: make test leaves the local cluster and the e2e suite out.
SKIP_CLUSTER=${SKIP_CLUSTER:-0}
# Extra flags for the e2e suite, split on spaces (write a space in a regex as .).
E2E_ARGS=${E2E_ARGS:-}
# GPUs per node the e2e suite may count on (empty: 8 against the local cluster,
# whose mock profile has 8; unknown elsewhere).
E2E_GPUS_PER_NODE=${E2E_GPUS_PER_NODE:-}
# E2E_REQUIRE=cap,... (e2e/require_test.go) names what the cluster must have: a
# spec that needs it fails instead of skipping. No default here on purpose: unset
# and empty differ (make e2e against the kind cluster fills in what kind-up
# deploys only when it is unset; make test and make drills set it).
# Which specs by Ginkgo label: the suite leaves the drills (label drill) to make
# drills, the upgrade spec (label upgrade) to make upgrade-test and the upstream
# upgrade spec (label upstream-upgrade) to make upstream-upgrade-test; it runs the
# lifecycle specs that restart the whole control plane (label lifecycle: the gate
# cycle, about 70 s), which '!drill && !upgrade && !lifecycle' leaves out.
E2E_LABEL_FILTER=${E2E_LABEL_FILTER:-!drill && !upgrade && !upstream-upgrade}
# How long the e2e suite may take (go test -timeout).
E2E_TIMEOUT=${E2E_TIMEOUT:-30m}
# make drills: pods of D1 (churn with a crashing scheduler) and of D4 and D9 (apiserver
# kill and pause); how long D9 keeps kube-apiserver stopped.
E2E_DRILL_CHURN_PODS=${E2E_DRILL_CHURN_PODS:-500}
E2E_DRILL_APISERVER_PODS=${E2E_DRILL_APISERVER_PODS:-100}
E2E_DRILL_APISERVER_PAUSE_SECONDS=${E2E_DRILL_APISERVER_PAUSE_SECONDS:-8}
# make drills: pods of D10 (every other one force-deleted) and how long its proxy holds back
# kube-scheduler's ResourceClaim watch.
E2E_DRILL_LAG_PODS=${E2E_DRILL_LAG_PODS:-60}
E2E_DRILL_CLAIM_LAG_SECONDS=${E2E_DRILL_CLAIM_LAG_SECONDS:-3}
# Where the e2e suite saves objects and events of failed specs.
E2E_ARTIFACTS=${E2E_ARTIFACTS:-$OUTPUT_DIR/e2e-artifacts}
# The shell image of the e2e pods (make cluster-deps packs it, kind-up loads it).
E2E_IMAGE=${E2E_IMAGE:-localhost/draext/busybox:$BUSYBOX_TAG}
# make perf: rounds per workload, and which workloads (empty: all). SCALING=1
# runs the scaling sizes instead: 100, 500, 1000 nodes, and 10 nodes of 16,
# 64, 128 devices (pods asking for 1 device, half a node, more than is free).
ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-}
SCALING=${SCALING:-0}

# --- kind (make docker-up, kind-base, node-image, kind-up, kind-down) -----------------

# ONLINE=1: kindest/base and images fetched from registries instead of the offline build.
ONLINE=${ONLINE:-0}
# The node image (empty: localhost/draext/kind-node:<draext version>).
NODE_IMAGE=${NODE_IMAGE:-}
# The offline base image, and the Debian mirror its debootstrap uses.
BASE_IMAGE=${BASE_IMAGE:-localhost/draext/kind-base:$DEBIAN_SUITE}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# make kind-up's cluster config (empty: kind-configs/single-node-<offline|online>.yaml).
KIND_CONFIG=${KIND_CONFIG:-}
# KEEP_DOCKER=1: make kind-down leaves draext's Docker engine running.
KEEP_DOCKER=${KEEP_DOCKER:-0}
