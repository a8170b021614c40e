# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Every version that the scripts pin, in one place (lib.sh sources this file).
# Each can be overridden from the environment, e.g. CONTAINERD_VERSION=v2.1.8.

# Go: the oldest release the scripts and our own modules need (lib.sh's hint,
# the go line of the etcd build module in scripts/install-etcd.sh).
GO_MIN_VERSION=${GO_MIN_VERSION:-1.24}

# Local cluster (scripts/cluster-deps.sh).
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.1.9} # CDI support; Debian's containerd 1.6 has none
CRICTL_VERSION=${CRICTL_VERSION:-v1.34.0}
CNI_VERSION=${CNI_VERSION:-v1.6.2} # containernetworking/plugins: bridge, host-local, loopback
PAUSE_TAG=${PAUSE_TAG:-3.10}       # localhost/draext/pause, built from the tree's build/pause
BUSYBOX_TAG=${BUSYBOX_TAG:-1.35}   # localhost/draext/busybox, from Debian's busybox-static

# etcd: what Kubernetes v1.33 tests with (scripts/install-etcd.sh, generate.sh).
ETCD_VERSION=${ETCD_VERSION:-3.5.24}

# Code generation (scripts/generate.sh): what upstream pins.
GOIMPORTS_VERSION=${GOIMPORTS_VERSION:-v0.26.0} # golang.org/x/tools/cmd/goimports
GOGO_PROTOBUF_VERSION=${GOGO_PROTOBUF_VERSION:-v1.3.2}
# The protoc that upstream's hack/lib/protoc.sh insists on; generate.sh's shim
# answers its version check with it (Debian's 3.21.12 writes the same bytes).
PROTOC_VERSION=${PROTOC_VERSION:-23.4}

# kind (scripts/kind-base.sh, node-image.sh): the release that pairs with 1.33.
KIND_VERSION=${KIND_VERSION:-v0.29.0}
LOCAL_PATH_PROVISIONER_VERSION=${LOCAL_PATH_PROVISIONER_VERSION:-v0.0.30}
# The Debian release of the offline kind base image (debootstrap, its tag
# localhost/draext/kind-base:<suite>) and of kube-proxy's base with ONLINE=1.
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}

# Static checks (scripts/verify.sh).
SHELLCHECK_VERSION=${SHELLCHECK_VERSION:-0.9.0}            # Debian bookworm's shellcheck package
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}    # github.com/golangci/golangci-lint/v2, built with our Go
LOGCHECK_VERSION=${LOGCHECK_VERSION:-v0.11.0}              # sigs.k8s.io/logtools/logcheck
