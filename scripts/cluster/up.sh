#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up: a local Kubernetes cluster of the patched binaries on this host,
# without Docker, on 127.0.0.x, in five phases (scripts/cluster/phases/):
#   pki            the CA, certificates and kubeconfigs
#   control-plane  etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#   nodes          per node a containerd (CDI on) and a kubelet (templates/)
#   driver         the example GPU driver with mock GPUs: DRA on node 1 (and
#                  every node but the last), the classic device plugin
#                  (nvidia.com/gpu) on the last node when NODES >= 2
#   stockdriver    a mock-GPU driver built only on stock published libraries
#                  (compat/stockdriver) on every node, its DeviceClass
#                  created through resource.k8s.io/v1 (STOCK_DRIVER=0: none)
# Its knobs (NODES, DRIVER, FEATURE_GATES, KUBELET_FEATURE_GATES, KBIN,
# MOCK_PROFILE, ...) are declared in scripts/lib/config.sh. A second run on a
# running cluster does nothing; a component that died is reported with its
# log and started again. Every process is kept by scripts/lib/proc.sh:
# scripts/cluster/ctl.sh lists, stops, signals and restarts them by name.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
for f in pki control-plane nodes driver stockdriver; do
	# shellcheck source=/dev/null # one phase each
	source "$DRAEXT_ROOT/scripts/cluster/phases/$f.sh"
done

[[ $NODES =~ ^[1-9]$ ]] || die "NODES=$NODES: use 1 to 9"
case $DRIVER in
host) ;;
daemonset) [[ $NODES == 1 ]] || die "DRIVER=daemonset needs NODES=1: overlays/local uses node 1's kubelet directories" ;;
*) die "DRIVER=$DRIVER: use host (default) or daemonset" ;;
esac
own_bin=$BIN_DIR
KBIN=${KBIN:-$BIN_DIR}
# Absolute: the recorded command lines are started again from other directories.
KBIN=$(realpath -m "$KBIN")
BIN_DIR=$KBIN
[[ $(id -u) == 0 ]] || die "the local cluster needs root (containerd, kubelet, cgroups, mounts)"

T0=$(date +%s.%N)
phase() { printf '==> [%5.1fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{print a-b}')" "$*" >&2; }

if [[ -f $PIDS/nodes && $(cat "$PIDS/nodes") != "$NODES" ]] && proc_alive etcd; then
	die "a cluster with $(cat "$PIDS/nodes") node(s) is running" "run make down first, or NODES=$(cat "$PIDS/nodes")"
fi

# The cluster's dependencies (scripts/cluster/deps.sh: containerd, etcd, CNI,
# the example driver and images) and the stock-library driver build in the
# background, beside the Kubernetes binaries: on a cold machine the two
# overlap their downloads and links, and the stock-library driver is ready
# when its phase comes. The upstream tree is fetched and patched first: deps.sh
# reads its pause source. Its output goes to _output/cluster/deps.log.
DEPS_LOG=$OUTPUT_DIR/cluster/deps.log
DEPS_PID=
# kill_tree PID: PID and every process under it (go build's compilers too).
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null || true
}
# start_deps [stockdriver]: start the background job; with stockdriver, it
# also builds the stock-library driver (patched binaries only: stock ones
# get no stock-library driver).
start_deps() {
	local with_stock=${1:-}
	mkdir -p "${DEPS_LOG%/*}"
	[[ -f $KUBE_TREE/build/pause/linux/pause.c ]] || bash "$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
	info "cluster dependencies build in the background (log: ${DEPS_LOG#"$DRAEXT_ROOT"/})"
	(
		bash "$DRAEXT_ROOT/scripts/cluster/deps.sh" || exit 1
		if [[ $with_stock == stockdriver && $STOCK_DRIVER == 1 ]]; then
			t0=$(now_s)
			stockdriver_build >/dev/null || exit 1
			info "stock-library driver ($STOCK_DRA_VERSION) built in $(($(now_s) - t0))s"
		fi
	) >"$DEPS_LOG" 2>&1 &
	DEPS_PID=$!
	# A failed build stops this script; the background job goes with it.
	trap '[[ -z $DEPS_PID ]] || kill_tree "$DEPS_PID"' EXIT
}
wait_deps() {
	if ! wait "$DEPS_PID"; then
		DEPS_PID=
		tail -n 30 "$DEPS_LOG" >&2
		die "building the cluster dependencies failed (log: ${DEPS_LOG#"$DRAEXT_ROOT"/})"
	fi
	DEPS_PID=
	grep -E 'cluster dependencies ready|stock-library driver .* built' "$DEPS_LOG" >&2 || true
}

# Binaries: (re)build what is missing or stale (incremental: under a second
# per binary when nothing changed). Binaries from KBIN= are used as they are.
if [[ $KBIN == "$(realpath -m "$own_bin")" ]]; then
	"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
	start_deps stockdriver
	WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl" bash "$DRAEXT_ROOT/scripts/build/build.sh"
else
	start_deps
	for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		[[ -x $KBIN/$b ]] || die "missing in KBIN=$KBIN: $b"
	done
fi
# What the binaries are decides the gates and API versions of the cluster:
#   patched (make build)                       the default gates, resource.k8s.io/v1 next to the betas
#   stock v1.33 (make build-base)              no DRAExtendedResource (they refuse it), no v1,
#                                              DeviceClass without extendedResourceName
#   stock v1.34 and later (make build-upstream) the default gates the release still knows (a
#                                              removed gate stops a component; the ones we set
#                                              are set true, so a gate locked to true is fine),
#                                              and the resource.k8s.io versions it serves
STOCK=0
# RUNTIME_CONFIG= replaces kube-apiserver's --runtime-config (patched binaries
# only), e.g. without resource.k8s.io/v1 to show that no component needs it.
RUNTIME_CONFIG=${RUNTIME_CONFIG:-resource.k8s.io/v1=true,resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,resource.k8s.io/v1alpha3=true}
kbin_version=$("$KBIN/kube-apiserver" --version 2>/dev/null | awk '{ print $2 }')
apiserver_gate=$(gate_probe "$KBIN/kube-apiserver" DRAExtendedResource)
kubelet_gate=$(gate_probe "$KBIN/kubelet" DRAExtendedResource)
[[ $apiserver_gate == "$kubelet_gate" ]] ||
	die "KBIN=$KBIN mixes patched and stock binaries (kube-apiserver: $apiserver_gate, kubelet: $kubelet_gate DRAExtendedResource)" "use one make build, make build-base or make build-upstream output"
case $apiserver_gate in
accepted)
	# A release after 1.33, stock or with the forward series (v1.37.2-draext.N).
	if [[ $kbin_version =~ ^v1\.([0-9]+)\.[0-9]+(-draext\.[0-9]+)?$ && ${BASH_REMATCH[1]} -gt 33 ]]; then
		[[ $FEATURE_GATES != "$DEFAULT_FEATURE_GATES" ]] || FEATURE_GATES=$(known_gates "$KBIN/kube-apiserver" "$FEATURE_GATES")
		[[ $KUBELET_FEATURE_GATES != "$DEFAULT_KUBELET_FEATURE_GATES" ]] || KUBELET_FEATURE_GATES=$(known_gates "$KBIN/kubelet" "$KUBELET_FEATURE_GATES")
		RUNTIME_CONFIG=$(release_runtime_config "$KBIN/kube-apiserver")
		info "KBIN=$KBIN holds $kbin_version: gates $FEATURE_GATES (kubelet: ${KUBELET_FEATURE_GATES:-none}), --runtime-config=$RUNTIME_CONFIG"
	fi
	;;
rejected)
	# shellcheck disable=SC2034 # read by phase_driver (phases/driver.sh)
	STOCK=1
	# resource.k8s.io/v1 is the series' (topic resource-v1): a stock v1.33.13
	# kube-apiserver refuses to start with it in --runtime-config.
	RUNTIME_CONFIG=${RUNTIME_CONFIG#resource.k8s.io/v1=true,}
	[[ $DRIVER == host ]] || die "DRIVER=$DRIVER with stock binaries: overlays/ apply the DeviceClass with extendedResourceName, which they refuse" "DRIVER=host"
	if [[ $FEATURE_GATES == "$DEFAULT_FEATURE_GATES" ]]; then
		FEATURE_GATES=$(tr ',' '\n' <<<"$FEATURE_GATES" | grep -v '^DRAExtendedResource=' | paste -sd,)
	fi
	for g in "$FEATURE_GATES" "$KUBELET_FEATURE_GATES"; do
		[[ ,$g, != *,DRAExtendedResource=* ]] ||
			die "KBIN=$KBIN holds stock binaries, which refuse the gate DRAExtendedResource" "leave it out of FEATURE_GATES and KUBELET_FEATURE_GATES"
	done
	info "KBIN=$KBIN holds stock binaries ($kbin_version): gates $FEATURE_GATES, DeviceClass without extendedResourceName"
	;;
*) die "cannot tell whether $KBIN/kube-apiserver knows the gate DRAExtendedResource" "$apiserver_gate" ;;
esac
wait_deps
mkdir -p "$LOGS" "$PIDS" "$STATE_DIR" "$RUN_DIR"
echo "$NODES" >"$PIDS/nodes"
echo "$DRIVER" >"$PIDS/driver"
# The kubelet creates the (hard-coded) device-plugin directory under
# /var/lib/kubelet; remember whether that was us, for make down PURGE=1.
[[ -e /var/lib/kubelet || -f $PIDS/created-var-lib-kubelet ]] || touch "$PIDS/created-var-lib-kubelet"

# launch NAME [--ready CHECK...] -- PROGRAM ARG...: record NAME's command line
# and readiness check, and start it unless it runs (scripts/lib/proc.sh).
launch() {
	local name=$1
	shift
	proc_define "$name" "$@"
	if proc_alive "$name"; then
		info "$name is running (pid $(proc_pid "$name"))"
		return 0
	fi
	proc_start "$name"
	STARTED+=("$name")
}
STARTED=()

# wait_for WHAT SECONDS COMMAND...: poll until COMMAND succeeds; a component
# started by this run that dies meanwhile stops the wait with its log.
wait_for() {
	local what=$1 timeout=$2
	shift 2
	local deadline=$(($(now_s) + timeout)) n
	until "$@" >/dev/null 2>&1; do
		for n in "${STARTED[@]}"; do
			proc_alive "$n" || { proc_log_tail "$n" 30; die "$n exited while waiting for $what (log: ${LOGS#"$DRAEXT_ROOT"/}/$n.log)"; }
		done
		(($(now_s) < deadline)) || die "timed out after ${timeout}s waiting for $what"
		sleep 0.2
	done
}

# The API versions of this cluster's binaries, not of the last cluster's.
rm -rf "$KUBECTL_CACHE"
phase_pki
phase_control_plane
phase_nodes
phase_driver
phase_stockdriver

phase "cluster up: $NODES node(s), feature gates $FEATURE_GATES, kubelets also $KUBELET_FEATURE_GATES"
cat >&2 <<EOF
    export KUBECONFIG=${KUBECONFIG_FILE}
    kubectl get nodes; kubectl get resourceslices; make demo; make e2e; make down
    scripts/cluster/ctl.sh list    # the cluster's processes; restart, stop or signal one by name
    logs: ${LOGS#"$DRAEXT_ROOT"/}/
EOF
