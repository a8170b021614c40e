# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up, phase 3: per node a cgroup root, a containerd (CDI on) with the
# cluster's images, and a kubelet, from the templates in
# scripts/cluster/templates; waits until each node is Ready. Sourced by
# scripts/cluster/up.sh; do not run it.

# kubelet_gates_yaml: FEATURE_GATES then KUBELET_FEATURE_GATES as the
# featureGates map of a KubeletConfiguration, each gate once (the kubelet
# refuses a config with a duplicate key), the last value winning.
kubelet_gates_yaml() {
	tr ',' '\n' <<<"$FEATURE_GATES,$KUBELET_FEATURE_GATES" | awk -F= '
		NF == 0 { next }
		NF != 2 || $1 == "" { printf "invalid feature gate \"%s\": use Name=true|false\n", $0 >"/dev/stderr"; exit 1 }
		!($1 in v) { order[++n] = $1 }
		{ v[$1] = $2 }
		END { for (i = 1; i <= n; i++) printf "  %s: %s\n", order[i], v[order[i]] }' ||
		die "FEATURE_GATES=$FEATURE_GATES KUBELET_FEATURE_GATES=$KUBELET_FEATURE_GATES: a gate is not Name=value"
}

# shared_state_dir: STATE_DIR as a shared mount, so that what a kubelet
# mounts in its own mount namespace under its root dir (pod volumes) is seen
# by containerd, which runs in the host's (the root mount may be private).
shared_state_dir() {
	if ! findmnt -n --target "$STATE_DIR" -o TARGET | grep -qxF "$STATE_DIR"; then
		mount --rbind "$STATE_DIR" "$STATE_DIR" || die "could not bind-mount $STATE_DIR onto itself"
	fi
	mount --make-rshared "$STATE_DIR" || die "could not make $STATE_DIR a shared mount"
}

# private_plugin_dir: DEVICE_PLUGIN_DIR as a private mount (bound onto
# itself), so that what a kubelet binds over it in its mount namespace stays
# there also where the root mount is shared (systemd makes it so). make down
# unmounts it ($PIDS/plugin-dir-mount says that make up mounted it).
private_plugin_dir() {
	mkdir -p "$DEVICE_PLUGIN_DIR"
	if ! findmnt -n --target "$DEVICE_PLUGIN_DIR" -o TARGET | grep -qxF "$DEVICE_PLUGIN_DIR"; then
		mount --bind "$DEVICE_PLUGIN_DIR" "$DEVICE_PLUGIN_DIR" || die "could not bind-mount $DEVICE_PLUGIN_DIR onto itself"
		touch "$PIDS/plugin-dir-mount"
	fi
	mount --make-private "$DEVICE_PLUGIN_DIR" || die "could not make $DEVICE_PLUGIN_DIR a private mount"
}

# kubelet_wrap I: what starts node I's kubelet (proc_wrap): a mount namespace
# of its own, where node_plugin_dir is the hard-coded DEVICE_PLUGIN_DIR. Two
# kubelets on one host would otherwise share the device-plugin socket (the
# device plugin registers with whichever started last) and the checkpoint of
# registered plugins (a DRA node's restarted kubelet would read the
# device-plugin node's and list nvidia.com/gpu: 0 for five minutes).
# DEVICE_PLUGIN_DIR is a private mount, so the bind stays in the namespace;
# STATE_DIR is shared, so the kubelet's volume mounts reach the host.
kubelet_wrap() {
	printf '%s\n' unshare --mount --propagation unchanged -- \
		sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$(node_plugin_dir "$1")" "$DEVICE_PLUGIN_DIR"
}

phase_nodes() {
	local gates i ip nd nr cg c img port runc wrap=()
	gates=$(kubelet_gates_yaml)
	runc=$(command -v runc) || die "runc is not installed" "make cluster-deps installs it"
	private_plugin_dir
	shared_state_dir
	for i in $(seq 1 "$NODES"); do
		ip=$(node_ip "$i") nd=$(node_dir "$i") nr=$(node_run "$i") cg=$(node_cgroup "$i")
		mkdir -p "$nd/containerd" "$nd/cdi" "$nd/cni-conf" "$nd/kubelet" "$nd/pod-logs" "$nd/static-pods" "$nd/driver" "$nr" "$(node_plugin_dir "$i")"
		# The kubelet requires its cgroup root to exist in every controller.
		for c in $(cgroup_controllers); do
			mkdir -p "$c$cg"
			if [[ $(basename "$c") == cpuset ]]; then
				cat "$c/cpuset.cpus" >"$c$cg/cpuset.cpus"
				cat "$c/cpuset.mems" >"$c$cg/cpuset.mems"
			fi
		done
		render_template containerd.toml "$nd/containerd.toml" NODE_DIR="$nd" NODE_RUN="$nr" PAUSE_TAG="$PAUSE_TAG" \
			RUNC="$runc" CNI_BIN_DIR="$CBIN/cni"
		render_template cni.conflist "$nd/cni-conf/10-draext.conflist" NODE="$i" NODE_DIR="$nd" POD_SUBNET="127.$((99 + i)).0.0/16"
		launch "containerd$i" --ready "$CBIN/ctr" -a "$nr/containerd.sock" version -- \
			env PATH="$CBIN:$PATH" "$CBIN/containerd" --config "$nd/containerd.toml"
		proc_wait "containerd$i" 60 "${STARTED[@]}"
		for img in "$CLUSTER_DIR"/images/*.tar; do
			"$CBIN/ctr" -a "$nr/containerd.sock" -n k8s.io images import --no-unpack=false "$img" >/dev/null ||
				die "importing $(basename "$img") into containerd on node $i failed"
		done
		port=$((10250 + 100 * (i - 1)))
		render_template kubelet.yaml "$nd/kubelet.yaml" NODE="$i" NODE_IP="$ip" NODE_DIR="$nd" NODE_RUN="$nr" NODE_CGROUP="$cg" \
			PKI="$PKI" KUBELET_PORT="$port" KUBELET_HEALTHZ_PORT="$((port - 2))" FEATURE_GATES_YAML="${gates%$'\n'}"
		mapfile -t wrap < <(kubelet_wrap "$i")
		proc_wrap "kubelet$i" "${wrap[@]}"
		launch "kubelet$i" --ready curl -sf "http://$ip:$((port - 2))/healthz" -- \
			"$KBIN/kubelet" --config="$nd/kubelet.yaml" --kubeconfig="$PKI/kubelet$i.kubeconfig" \
			--hostname-override="$ip" --root-dir="$nd/kubelet" --cert-dir="$PKI" --v=2
		wait_for "node $ip Ready" 120 kubectl_matches '^True$' get node "$ip" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'
		phase "node $ip Ready"
	done
	wait_for "default ServiceAccount" 60 kubectl_ get serviceaccount default
}
