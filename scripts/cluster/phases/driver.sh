# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up, phase 4: the example GPU driver with mock GPUs, its ClusterRole and
# DeviceClass; per node a host process (DRA, or the device plugin on the last
# of two or more nodes), or with DRIVER=daemonset the DaemonSet of
# overlays/local. Waits until every node offers its GPUs. Sourced by
# scripts/cluster/up.sh; do not run it.

# driver_args I: the command-line flags of node I's host-process driver.
driver_args() {
	local i=$1 ip nd mode
	ip=$(node_ip "$i") nd=$(node_dir "$i") mode=$(node_mode "$i")
	# -v=2 adds the checkpoint and health details to the per-claim lines.
	printf '%s\n' --mode="$mode" --nvml="mock:$MOCK_PROFILE" --node-name="$ip" --state-dir="$nd/driver" -v=2
	if [[ $mode == dra ]]; then
		printf '%s\n' --kubeconfig="$PKI/draext-gpu.kubeconfig" --cdi-root="$nd/cdi" \
			--kubelet-plugins-dir="$nd/kubelet/plugins" --kubelet-registrar-dir="$nd/kubelet/plugins_registry" \
			--healthcheck-address="127.0.0.1:$((HEALTH_PORT_BASE + i))" \
			--kubelet-podresources-socket="$nd/kubelet/pod-resources/kubelet.sock"
	else
		# The node's kubelet sees this directory as its device-plugin
		# directory, in its mount namespace (kubelet_wrap).
		printf '%s\n' --device-plugin-dir="$(node_plugin_dir "$i")"
	fi
}

phase_driver() {
	local i ip args=()
	kubectl_ apply -f "$DRAEXT_ROOT/overlays/base/clusterrole.yaml" >/dev/null ||
		die "applying the driver's ClusterRole failed"
	# A stock kube-apiserver refuses extendedResourceName (strict field validation).
	if [[ ${STOCK:-0} == 1 ]]; then
		sed '/^[[:space:]]*extendedResourceName:/d' "$DRAEXT_ROOT/overlays/base/deviceclass.yaml"
	else
		cat "$DRAEXT_ROOT/overlays/base/deviceclass.yaml"
	fi | kubectl_ apply -f - >/dev/null || die "applying the DeviceClass of overlays/base/deviceclass.yaml failed"
	kubectl_ create clusterrolebinding draext-gpu-host --clusterrole=draext-gpu --user=draext-gpu-driver \
		--dry-run=client -o yaml | kubectl_ apply -f - >/dev/null ||
		die "applying the ClusterRoleBinding draext-gpu-host failed"
	if [[ $DRIVER == daemonset ]]; then
		kubectl_ apply -k "$DRAEXT_ROOT/overlays/local" >/dev/null || die "applying overlays/local failed"
		phase "driver DaemonSet applied (overlays/local)"
	else
		for i in $(seq 1 "$NODES"); do
			mapfile -t args < <(driver_args "$i")
			launch "draext-gpu$i" -- "$CBIN/draext-gpu" "${args[@]}"
		done
	fi
	for i in $(seq 1 "$NODES"); do
		ip=$(node_ip "$i")
		if [[ $(node_mode "$i") == dra ]]; then
			wait_for "ResourceSlice of node $ip" 60 kubectl_matches 'gpu\.draext\.dev' get resourceslices -o "jsonpath={.items[?(@.spec.nodeName==\"$ip\")].spec.driver}"
			phase "node $ip: DRA driver published its GPUs"
		else
			wait_for "nvidia.com/gpu on node $ip" 60 kubectl_matches '[1-9]' get node "$ip" -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}'
			phase "node $ip: device plugin advertises nvidia.com/gpu"
		fi
	done
}
