#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make test-kind: the release on a multi-node kind cluster, as a user would
# take it, offline:
#   1. make release (incremental);
#   2. make docker-up's engine (started here when no Docker runs);
#   3. the kind node image from the release's binaries and component images
#      (node-image.sh with RELEASE_DIR), tagged with the release's version;
#   4. kind-configs/multi-node-offline.yaml (one control plane, two workers),
#      the pod network of make kind-up (a bridge per node on its podCIDR,
#      routes between nodes), the driver image and overlays/mock of the
#      release;
#   5. the e2e suite with the KEP-5004 specs and the cross-node network spec
#      required (E2E_REQUIRE=cluster,gates,driver,daemonset,admin,pod-network);
#   6. make kind-down, also when a step failed (KEEP_KIND=1 keeps the
#      cluster for a look; make kind-down removes it then).
# Each step's time is printed at the end.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

[[ $(id -u) == 0 ]] || die "make test-kind needs root (Docker, kind)"
VERSION=$(draext_version)
export RELEASE_DIR=$OUTPUT_DIR/release/$VERSION
export KIND_CONFIG=$DRAEXT_ROOT/kind-configs/multi-node-offline.yaml
export NODE_IMAGE=localhost/draext/kind-node:$VERSION
start=$(now_s)
times=()

timed release bash "$DRAEXT_ROOT/scripts/build/release.sh"
timed docker-up bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" up
if [[ ${KEEP_KIND:-0} != 1 ]]; then
	trap 'bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" down' EXIT
fi
# A cluster of an earlier run would keep its old node image.
KEEP_DOCKER=1 bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" down >/dev/null 2>&1 || true
timed node-image bash "$DRAEXT_ROOT/scripts/kind/node-image.sh"
timed kind-up bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" up
timed e2e env KUBECONFIG="$OUTPUT_DIR/kind/kubeconfig" E2E_REQUIRE=cluster,gates,driver,daemonset,admin,pod-network \
	bash "$DRAEXT_ROOT/scripts/test/e2e.sh"
log "make test-kind passed ($(($(now_s) - start))s: ${times[*]})"
