#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Runs the Ginkgo e2e suite (e2e/) against KUBECONFIG, by default the local
# cluster's. Extra Ginkgo flags go in E2E_ARGS (e.g. E2E_ARGS=-ginkgo.focus=CDI); it is split
# on spaces, so write a space in a focus regex as . (E2E_ARGS=-ginkgo.focus=kubelet.restart).
# Arguments of the script go to Ginkgo as they are, after E2E_ARGS.
# E2E_REQUIRE=cap,... names what the cluster must have (e2e/require_test.go):
# a spec that needs it fails instead of skipping; make test sets it, and it
# defaults to what make kind-up deploys against the kind cluster.
# Objects and events of failed specs are saved in _output/e2e-artifacts.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/staging.sh"

if [[ -z ${KUBECONFIG:-} ]]; then
	[[ -f $KUBECONFIG_FILE ]] || die "KUBECONFIG is not set and no local cluster is running" "make up, or KUBECONFIG=<file> make e2e"
	export KUBECONFIG=$KUBECONFIG_FILE
fi
if [[ $KUBECONFIG == "$KUBECONFIG_FILE" ]]; then
	# The local cluster's CDI dirs are on this host: check the driver's specs too.
	export E2E_CDI_DIR="$STATE_DIR/node*/cdi"
	# make up runs the driver with 8 mock GPUs per node.
	export E2E_GPUS_PER_NODE=${E2E_GPUS_PER_NODE:-8}
	# The kubelets' PodResources sockets are on this host too: the suite asks
	# them, with cmd/draext-podresources, what they report under dynamic
	# resources (make up turns on KubeletPodResourcesDynamicResources).
	(cd "$DRAEXT_ROOT" && GOWORK=off go build -o "$OUTPUT_DIR/bin/draext-podresources" ./cmd/draext-podresources) ||
		die "building cmd/draext-podresources failed (see the go error above)"
	export E2E_PODRESOURCES="$OUTPUT_DIR/bin/draext-podresources"
	# node_dir <i> is $STATE_DIR/node<i>, the kubelet's root dir <node dir>/kubelet.
	export E2E_PODRESOURCES_SOCKETS="$STATE_DIR/node*/kubelet/pod-resources/kubelet.sock"
	# The restart specs stop a kubelet, driver or scheduler and start it
	# again through the cluster's process control (scripts/cluster/ctl.sh).
	export E2E_CLUSTER_CTL="$DRAEXT_ROOT/scripts/cluster/ctl.sh"
	# The migration spec moves a node between device plugin and DRA with it.
	export E2E_CLUSTER_MIGRATE="$DRAEXT_ROOT/scripts/cluster/migrate.sh"
	# The spec of a node served both ways reads the scheduler's gauge.
	export E2E_SCHEDULER_METRICS=https://127.0.0.1:10259/metrics
	# The drills ask the nodes' containerd about containers (crictl inspect).
	export E2E_CRICTL="$CBIN/crictl" E2E_CRI_SOCKETS="$RUN_DIR/node*/containerd.sock"
fi
if [[ $(realpath -m "$KUBECONFIG") == "$(realpath -m "$OUTPUT_DIR/kind/kubeconfig")" && -z ${E2E_REQUIRE+set} ]]; then
	# make kind-up deploys the driver as a DaemonSet: a spec that needs it
	# fails instead of skipping (E2E_REQUIRE= to let them skip).
	export E2E_REQUIRE=cluster,gates,driver,daemonset,admin
fi
export E2E_ARTIFACTS
# The shell image that make cluster-deps packs (and kind-up loads), at its pinned tag.
export E2E_IMAGE
rm -rf "$E2E_ARTIFACTS"
# The suite reads the new API fields typed, through the exported staging modules.
"$DRAEXT_ROOT/scripts/build/staging.sh"
# The kubectl draext spec runs the plugin (staging/example), built on the exported modules.
(cd "$DRAEXT_ROOT/staging/example" && staging_go build -o "$OUTPUT_DIR/bin/kubectl-draext" .) ||
	die "building kubectl-draext (staging/example) failed (see the go error above)"
export E2E_KUBECTL_DRAEXT="$OUTPUT_DIR/bin/kubectl-draext"
log "e2e suite against $KUBECONFIG"
start=$(now_s)
color=()
[[ -t 1 ]] || color=(-ginkgo.no-color)
# shellcheck disable=SC2086 # E2E_ARGS is a list of flags
(cd "$DRAEXT_ROOT/e2e" && staging_go test -v -count=1 -timeout "$E2E_TIMEOUT" . -args -ginkgo.v "${color[@]}" \
	-ginkgo.label-filter="$E2E_LABEL_FILTER" $E2E_ARGS "$@") ||
	die "the e2e suite failed" "objects and events of failed specs: ${E2E_ARTIFACTS#"$DRAEXT_ROOT"/}"
log "e2e suite passed ($(($(now_s) - start))s)"
