#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make migrate MIGRATE_NODE=<i>|127.0.0.<i> MIGRATE_TO=dra|device-plugin: move node i of the
# running local cluster (host-process drivers) from the device plugin to DRA
# or back, with pods running, one step and its time per line.
#
# To dra: stop the device plugin; wait until the node's allocatable
# nvidia.com/gpu is 0; start the driver in DRA mode (the node lock in its state
# directory is free once the plugin has exited); wait for its ResourceSlice.
# GPUs that device-plugin containers still hold stay out of the slice until
# those containers end (the driver asks the kubelet's PodResources API).
# To device-plugin: refused while claims are allocated on the node (delete
# their pods first); stop the driver, delete its ResourceSlices, start the
# device plugin, wait for allocatable > 0.
# The node's mode is recorded (node_mode), so make up keeps it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
# shellcheck source=scripts/cluster/phases/driver.sh
source "$DRAEXT_ROOT/scripts/cluster/phases/driver.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running" "make up NODES=2, then make migrate"
[[ $(cat "$PIDS/driver" 2>/dev/null) == host ]] || die "make migrate moves host-process drivers; this cluster runs DRIVER=$(cat "$PIDS/driver" 2>/dev/null)" "make up NODES=2 DRIVER=host"
nodes=$(cat "$PIDS/nodes")
i=${MIGRATE_NODE:-$nodes}
# A node by index or by name (127.0.0.<index>).
[[ $i =~ ^127\.0\.0\.([1-9])$ ]] && i=${BASH_REMATCH[1]}
[[ $i =~ ^[1-9]$ ]] && ((i <= nodes)) || die "MIGRATE_NODE=${MIGRATE_NODE:-}: the cluster has nodes 1 to $nodes (or 127.0.0.1 to 127.0.0.$nodes)"
ip=$(node_ip "$i")
from=$(node_mode "$i")
to=$MIGRATE_TO
case $to in dra | device-plugin) ;; *) die "MIGRATE_TO=$to: use dra or device-plugin" ;; esac
[[ $from != "$to" ]] || die "node $ip already serves its GPUs through $to" "MIGRATE_TO=$([[ $to == dra ]] && echo device-plugin || echo dra) to move it back"

T0=$(date +%s.%N)
step() { printf '==> [%5.1fs] node %s: %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{print a-b}')" "$ip" "$*" >&2; }

# wait_until WHAT SECONDS COMMAND...: poll COMMAND until it succeeds.
wait_until() {
	local what=$1 timeout=$2
	shift 2
	local deadline=$(($(now_s) + timeout))
	until "$@" >/dev/null 2>&1; do
		(($(now_s) < deadline)) || die "node $ip: timed out after ${timeout}s waiting for $what" "driver log: ${LOGS#"$DRAEXT_ROOT"/}/draext-gpu$i.log"
		sleep 0.5
	done
}
allocatable() { kubectl_ get node "$ip" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}'; }
slice_devices() {
	kubectl_ get resourceslices --field-selector "spec.nodeName=$ip,spec.driver=gpu.draext.dev" \
		-o jsonpath='{range .items[*]}{range .spec.devices[*]}{.name}{"\n"}{end}{end}'
}
# prepared_claims: the UIDs of the claims that the driver's checkpoint holds
# as prepared, one per line.
prepared_claims() {
	local checkpoint
	checkpoint="$(node_dir "$i")/driver/checkpoint.json"
	[[ -f $checkpoint ]] || return 0
	jq -r '.claims // {} | keys[]' "$checkpoint" || die "cannot read the driver's checkpoint $checkpoint"
}
has_slice() { [[ -n $(kubectl_ get resourceslices --field-selector "spec.nodeName=$ip,spec.driver=gpu.draext.dev" -o name) ]]; }
start_driver() {
	local args=()
	mapfile -t args < <(driver_args "$i")
	proc_define "draext-gpu$i" -- "$CBIN/draext-gpu" "${args[@]}"
	proc_start "draext-gpu$i"
}

step "from $from to $to"
if [[ $to == dra ]]; then
	step "stopping the device plugin (draext-gpu$i)"
	proc_stop "draext-gpu$i"
	wait_until "allocatable nvidia.com/gpu 0" 120 kubectl_matches '^0$' get node "$ip" -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}'
	step "allocatable nvidia.com/gpu is 0 (capacity stays listed: the kubelet keeps the name, at 0, for good)"
	node_set_mode "$i" dra
	step "starting the DRA driver"
	start_driver
	wait_until "its ResourceSlice" 60 has_slice
	published=$(slice_devices | grep -c . || true)
	step "ResourceSlice published with $published GPU(s); GPUs that device-plugin containers hold stay out until they end (driver log: ${LOGS#"$DRAEXT_ROOT"/}/draext-gpu$i.log)"
else
	claims=$(kubectl_ get resourceclaims -A -o jsonpath="{range .items[?(@.status.allocation)]}{.metadata.namespace}/{.metadata.name} {.status.allocation.devices.results[*].pool}{\"\\n\"}{end}" |
		awk -v ip="$ip" '{for (f = 2; f <= NF; f++) if ($f == ip) {print $1; break}}')
	[[ -z $claims || $FORCE == 1 ]] || die "node $ip has allocated claims; delete their pods first (FORCE=1 moves it anyway):" "$(head -5 <<<"$claims")"
	# A claim can be gone from the API (its pod deleted with grace 0)
	# while the kubelet has not unprepared it yet. A driver stopped then
	# keeps it prepared, and when the node comes back to DRA it refuses
	# its GPUs to new claims until the kubelet's next cleanup, a minute
	# after the kubelet starts.
	if [[ -n $(prepared_claims) && $FORCE != 1 ]]; then
		step "waiting for the kubelet to unprepare $(prepared_claims | wc -l) claim(s) on the node"
		deadline=$(($(now_s) + 120))
		while [[ -n $(prepared_claims) ]]; do
			(($(now_s) < deadline)) || die "node $ip: the driver still has claims prepared after 120 s (FORCE=1 moves it anyway): $(prepared_claims | tr '\n' ' ')" \
				"their pods may still be stopping; driver log: ${LOGS#"$DRAEXT_ROOT"/}/draext-gpu$i.log"
			sleep 0.5
		done
	fi
	step "stopping the DRA driver (draext-gpu$i)"
	proc_stop "draext-gpu$i"
	kubectl_ delete resourceslices --field-selector "spec.nodeName=$ip,spec.driver=gpu.draext.dev" >/dev/null
	step "its ResourceSlices deleted"
	node_set_mode "$i" device-plugin
	step "starting the device plugin"
	start_driver
	wait_until "allocatable nvidia.com/gpu > 0" 120 kubectl_matches '[1-9]' get node "$ip" -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}'
	step "the device plugin advertises nvidia.com/gpu: $(allocatable)"
fi
step "done: node $ip serves its GPUs through $to"
