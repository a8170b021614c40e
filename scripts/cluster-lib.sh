# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Shared by cluster-up.sh and cluster-down.sh: where the local cluster keeps
# its pieces, and how its processes are tracked.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are for the scripts that source this file
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CLUSTER_DIR=$OUTPUT_DIR/cluster # binaries, images, pki, logs, pids, kubeconfig
CBIN=$CLUSTER_DIR/bin
PKI=$CLUSTER_DIR/pki
LOGS=$CLUSTER_DIR/logs
PIDS=$CLUSTER_DIR/run
KUBECONFIG_FILE=$CLUSTER_DIR/kubeconfig
# State that must sit on short, absolute paths (unix sockets, kubelet root
# dirs, cgroups) lives outside the checkout.
STATE_DIR=${STATE_DIR:-/var/lib/draext-cluster}
RUN_DIR=${RUN_DIR:-/run/draext-cluster}
# The device-plugin socket path is hard-coded in the kubelet.
DEVICE_PLUGIN_DIR=/var/lib/kubelet/device-plugins

node_ip() { echo "127.0.0.$1"; }
node_dir() { echo "$STATE_DIR/node$1"; }
node_run() { echo "$RUN_DIR/node$1"; }
node_cgroup() { echo "/draext-node$1"; }
# node_mode I: how node I gets its GPUs. With two or more nodes the last one
# (started last, so it owns the shared device-plugin socket) runs the device
# plugin, the others the DRA driver.
node_mode() {
	local nodes
	nodes=$(cat "$PIDS/nodes" 2>/dev/null || echo "${NODES:-1}")
	if ((nodes >= 2 && $1 == nodes)); then echo device-plugin; else echo dra; fi
}

# alive NAME: the process in NAME's pid file runs and is still what we
# started (its command line names the binary recorded next to the pid).
alive() {
	local pidf=$PIDS/$1.pid pid exe
	[[ -f $pidf ]] || return 1
	read -r pid exe <"$pidf"
	[[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$exe"
}

pid_of() { awk '{print $1}' "$PIDS/$1.pid" 2>/dev/null; }

# log_tail NAME [LINES]: the last lines of NAME's log on stderr, for a
# failure report. Never fails: a missing log is said, not an error (callers
# run it right before die, under errexit).
log_tail() {
	local f=$LOGS/$1.log
	if [[ -f $f ]]; then
		tail -n "${2:-20}" "$f" | sed 's/^/    | /' >&2 || true
	else
		info "(no log ${f#"$DRAEXT_ROOT"/})"
	fi
}

cgroup_controllers() {
	local c
	for c in /sys/fs/cgroup/*; do
		[[ -d $c && $(basename "$c") != unified && -e $c/cgroup.procs ]] && echo "$c"
	done
}

# cgroup_hierarchies: every mounted hierarchy, cgroup v2's unified one
# included (the kubelet creates its cgroup root there too).
cgroup_hierarchies() {
	local c
	for c in /sys/fs/cgroup/*; do
		[[ -d $c && -e $c/cgroup.procs ]] && echo "$c"
	done
}

kubectl_() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
