#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make upgrade-test: a local cluster of stock v1.33.13 binaries
# (make build-base) with NODES=2, a device-plugin pod and a claim-template pod
# running; the e2e spec labelled "upgrade" replaces every binary with the
# patched one (make build) in the version skew order, turns DRAExtendedResource
# on, runs a nvidia.com/gpu pod through DRA, goes back to stock with DRA-served
# pods running, measures what that loses, and upgrades again. One line of
# figures per phase at the end (also in _output/upgrade/report.txt). The
# binaries must be built: this builds nothing heavy.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

require_own_cluster "make upgrade-test"
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
	[[ -x $BASE_BIN_DIR/$b ]] || die "no stock $b in ${BASE_BIN_DIR#"$DRAEXT_ROOT"/}" "make build-base first"
	[[ -x $BIN_DIR/$b ]] || die "no patched $b in ${BIN_DIR#"$DRAEXT_ROOT"/}" "make build first"
done
# The patched binaries of the committed series (a second or so when they are current).
WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl" bash "$DRAEXT_ROOT/scripts/build/build.sh"
report=$OUTPUT_DIR/upgrade/report.txt
mkdir -p "${report%/*}"
: >"$report"
start=$(now_s)
trap 'PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh" || true' EXIT
NODES=2 DRIVER=host KBIN=$BASE_BIN_DIR bash "$DRAEXT_ROOT/scripts/cluster/up.sh"
rc=0
KUBECONFIG=$KUBECONFIG_FILE E2E_LABEL_FILTER=upgrade E2E_TIMEOUT=30m E2E_DRILL_REPORT=$report E2E_REQUIRE=cluster,driver,device-plugin,restart,upgrade \
	E2E_BASE_BIN=$(realpath "$BASE_BIN_DIR") E2E_UPGRADE_BIN=$(realpath "$BIN_DIR") bash "$DRAEXT_ROOT/scripts/test/e2e.sh" || rc=$?
print_figures "upgrade test" "$report" "$start"
trap - EXIT
PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh"
((rc == 0)) || die "the upgrade test failed (see above); figures in ${report#"$DRAEXT_ROOT"/}"
