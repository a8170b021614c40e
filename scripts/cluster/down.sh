#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make down: stops the local cluster that make up started, and only that:
# processes through scripts/lib/proc.sh (pid files checked against their
# command line; SIGTERM, SIGKILL after 15 s), the pods' shims by
# their containerd socket, then the mounts, bridges and cgroups it made.
# PURGE=1 also wipes the cluster state (etcd data, kubelet and containerd
# roots, certificates); logs stay in _output/cluster/logs.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ $(id -u) == 0 ]] || die "stopping the local cluster needs root"
start_s=$(now_s)
nodes=$(cat "$PIDS/nodes" 2>/dev/null || echo 0)

# Pods first, while their drivers still run, so that claims are unprepared
# and CDI specs removed (a pod whose driver is gone hangs in Terminating).
if proc_alive kube-apiserver && [[ -f $KUBECONFIG_FILE ]]; then
	kubectl_ delete pods --all-namespaces --field-selector metadata.namespace!=draext-gpu \
		--grace-period=1 --timeout=60s >/dev/null 2>&1 ||
		warn "not every pod could be deleted through the API; their containers are removed below"
	# The driver's DaemonSet (DRIVER=daemonset) goes last.
	kubectl_ -n draext-gpu delete daemonset --all --timeout=60s >/dev/null 2>&1 || true
	kubectl_ -n draext-gpu delete pods --all --grace-period=1 --timeout=60s >/dev/null 2>&1 || true
fi

for ((i = nodes; i >= 1; i--)); do
	proc_stop "stockdriver$i"
	proc_stop "draext-gpu$i"
	proc_stop "kubelet$i"
	sock=$(node_run "$i")/containerd.sock
	if proc_alive "containerd$i"; then
		"$CBIN/crictl" --runtime-endpoint "unix://$sock" rmp --all --force >/dev/null 2>&1 || true
	fi
	proc_stop "containerd$i"
	# Shims outlive containerd; ours name its socket on their command line.
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock" || true); do
		send_signal KILL "$p"
	done
done
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do
	proc_stop "$c"
done

# Mounts the kubelets and containerds made under our state, deepest first.
for ((pass = 0; pass < 3; pass++)); do
	mapfile -t mounts < <(findmnt -rn -o TARGET | grep -E "^($STATE_DIR|$RUN_DIR)(/|$)" | sort -r)
	((${#mounts[@]})) || break
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
done
for ((i = 1; i <= 9; i++)); do
	if ip link show "draext$i" >/dev/null 2>&1; then
		ip link delete "draext$i" 2>/dev/null || ! ip link show "draext$i" >/dev/null 2>&1 ||
			warn "could not delete bridge draext$i"
	fi
	cg=$(node_cgroup "$i")
	for c in $(cgroup_hierarchies); do
		[[ -d $c$cg ]] || continue
		# Kill what is left in the node's cgroups, then remove them bottom-up.
		# shellcheck disable=SC2038 # xargs gets the pids in the files, not file names
		find "$c$cg" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
		find "$c$cg" -depth -type d -exec rmdir {} + 2>/dev/null || warn "could not remove cgroup $c$cg"
	done
done
rm -rf "$RUN_DIR"
# The self-bind of the device-plugin directory that make up made private.
if [[ -f $PIDS/plugin-dir-mount ]]; then
	umount "$DEVICE_PLUGIN_DIR" 2>/dev/null || umount -l "$DEVICE_PLUGIN_DIR" 2>/dev/null ||
		warn "could not unmount $DEVICE_PLUGIN_DIR"
	rm -f "$PIDS/plugin-dir-mount"
fi

if [[ $PURGE == 1 ]]; then
	rm -rf "$STATE_DIR" "$PKI" "$KUBECONFIG_FILE"
	if [[ -f $PIDS/created-var-lib-kubelet ]]; then
		rm -rf /var/lib/kubelet
	fi
	find /var/log/containers -xtype l -delete 2>/dev/null || true
	rm -rf "$PIDS"
	log "cluster stopped and purged ($(($(now_s) - start_s))s); logs kept in ${LOGS#"$DRAEXT_ROOT"/}"
else
	log "cluster stopped ($(($(now_s) - start_s))s); state kept (PURGE=1 wipes it)"
fi
