#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make upstream-upgrade-test: a draext cluster (make up NODES=2,
# the patched binaries of make build, DRAExtendedResource on) with DRA-served
# pods and a device-plugin pod running is moved to each stock release of
# UPSTREAM_VERSIONS in turn, every component restarted in the version skew
# order by the e2e spec labelled "upstream-upgrade". Each release's binaries
# (make build-upstream, built here when missing or stale) are asked which
# gates they know and which resource.k8s.io versions they serve, as make up
# KBIN= does; the spec gets that per release in a JSON file
# (E2E_UPSTREAM_STEPS). One line of figures per step at the end, also in
# _output/upstream-upgrade/report.txt. Too slow for make test: the four
# releases' builds take about 25 minutes the first time, the test itself
# about 15.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

UPSTREAM_VERSIONS=${UPSTREAM_VERSIONS:-v1.34.4 v1.35.4 v1.36.3 v1.37.2}
require_own_cluster "make upstream-upgrade-test"
out=$OUTPUT_DIR/upstream-upgrade
rm -rf "$out"
mkdir -p "$out"
report=$out/report.txt
: >"$report"
# The patched binaries of the committed series, then each release's.
WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl" bash "$DRAEXT_ROOT/scripts/build/build.sh"
steps=()
for v in $UPSTREAM_VERSIONS; do
	UPSTREAM=$v WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet" bash "$DRAEXT_ROOT/scripts/build/build.sh"
	bin=$(realpath "$UPSTREAM_DIR/$v/bin")
	cp_gates=$(known_gates "$bin/kube-apiserver" "$DEFAULT_FEATURE_GATES")
	kubelet_gates=$(known_gates "$bin/kubelet" "$DEFAULT_FEATURE_GATES,$DEFAULT_KUBELET_FEATURE_GATES")
	runtime_config=$(release_runtime_config "$bin/kube-apiserver")
	info "$v: gates $cp_gates, kubelet gates $kubelet_gates, --runtime-config=$runtime_config"
	# No quotes or backslashes in these values: plain JSON strings.
	steps+=("$(printf '{"version": "%s", "bin": "%s", "gates": "%s", "kubeletGates": "%s", "runtimeConfig": "%s"}' \
		"$v" "$bin" "$cp_gates" "$kubelet_gates" "$runtime_config")")
done
(
	IFS=,
	echo "[${steps[*]}]"
) >"$out/steps.json"

start=$(now_s)
trap 'PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh" || true' EXIT
NODES=2 DRIVER=host bash "$DRAEXT_ROOT/scripts/cluster/up.sh"
rc=0
KUBECONFIG=$KUBECONFIG_FILE E2E_LABEL_FILTER=upstream-upgrade E2E_TIMEOUT=60m E2E_DRILL_REPORT=$report \
	E2E_REQUIRE=cluster,driver,device-plugin,restart,scheduler-metrics,upstream-upgrade E2E_UPSTREAM_STEPS=$out/steps.json \
	bash "$DRAEXT_ROOT/scripts/test/e2e.sh" || rc=$?
print_figures "upstream upgrade test, without the builds" "$report" "$start"
trap - EXIT
PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh"
((rc == 0)) || die "the upstream upgrade test failed (see above); figures in ${report#"$DRAEXT_ROOT"/}"
