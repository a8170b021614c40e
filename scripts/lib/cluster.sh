# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Where the local cluster keeps its pieces (scripts/cluster/): paths, nodes,
# cgroups, kubectl. Its processes are kept by proc.sh in PIDS. Source it; do
# not run it.
# shellcheck shell=bash
# shellcheck disable=SC2034 # the settings are for the scripts that source this file
source "$(dirname "${BASH_SOURCE[0]}")/proc.sh"

CLUSTER_DIR=$OUTPUT_DIR/cluster # binaries, images, pki, logs, pids, kubeconfig
CBIN=$CLUSTER_DIR/bin
PKI=$CLUSTER_DIR/pki
LOGS=$CLUSTER_DIR/logs
PIDS=$CLUSTER_DIR/run
KUBECONFIG_FILE=$CLUSTER_DIR/kubeconfig
PROC_DIR=$PIDS
PROC_LOG_DIR=$LOGS
# STATE_DIR and RUN_DIR (config.sh) hold what must sit on short, absolute
# paths (unix sockets, kubelet root dirs, cgroups), outside the checkout.
# The device-plugin directory is hard-coded in the kubelet: its socket and
# its checkpoint of registered device plugins. Each kubelet of the local
# cluster runs in a mount namespace of its own with node_plugin_dir mounted
# there (kubelet_wrap), as on a real node.
DEVICE_PLUGIN_DIR=/var/lib/kubelet/device-plugins

node_ip() { echo "127.0.0.$1"; }
node_dir() { echo "$STATE_DIR/node$1"; }
node_run() { echo "$RUN_DIR/node$1"; }
# node_plugin_dir I: node I's device-plugin directory, the kubelet's
# DEVICE_PLUGIN_DIR in its mount namespace.
node_plugin_dir() { echo "$STATE_DIR/node$1/device-plugins"; }
node_cgroup() { echo "/draext-node$1"; }
# node_mode I: how node I gets its GPUs: dra or device-plugin. make migrate
# records a mode that differs from the default in the node's state directory
# (make down PURGE=1 forgets it). The default: with two or more nodes the
# last one runs the device plugin, the others the DRA driver.
node_mode() {
	local recorded
	recorded=$(cat "$(node_dir "$1")/mode" 2>/dev/null || true)
	if [[ -n $recorded ]]; then
		echo "$recorded"
		return
	fi
	node_default_mode "$1"
}

# node_default_mode I: node I's mode unless make migrate moved it.
node_default_mode() {
	local nodes
	nodes=$(cat "$PIDS/nodes" 2>/dev/null || echo "$NODES")
	if ((nodes >= 2 && $1 == nodes)); then echo device-plugin; else echo dra; fi
}

# node_set_mode I MODE: record how node I gets its GPUs (dra or
# device-plugin); the default is not recorded, so that the node follows the
# default of a cluster of another size.
node_set_mode() {
	case $2 in dra | device-plugin) ;; *) die "node_set_mode: mode '$2': use dra or device-plugin" ;; esac
	mkdir -p "$(node_dir "$1")"
	if [[ $2 == "$(node_default_mode "$1")" ]]; then
		rm -f "$(node_dir "$1")/mode"
	else
		echo "$2" >"$(node_dir "$1")/mode"
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

# KUBECTL_CACHE is the discovery cache of kubectl_, one per cluster: every
# local cluster listens on 127.0.0.1:6443, and kubectl's default cache
# (~/.kube/cache, kept for hours) would answer for one cluster with what an
# earlier one served (draext's resource.k8s.io/v1 for a stock v1.33.13 one,
# so "the server could not find the requested resource"). make up empties it.
KUBECTL_CACHE=$CLUSTER_DIR/kubectl-cache
kubectl_() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$KUBECTL_CACHE" "$@"; }
# kubectl_matches REGEX ARGS...: whether kubectl_ ARGS succeeds and prints
# something that the extended regular expression REGEX matches; for the
# waits of make up and make migrate (no pipe: no grep -q racing pipefail).
kubectl_matches() {
	local re=$1 out
	shift
	out=$(kubectl_ "$@" 2>/dev/null) && [[ $out =~ $re ]]
}

# render_template TEMPLATE OUT NAME=VALUE...: OUT is TEMPLATE (under
# scripts/cluster/templates) with each ${NAME} replaced by its VALUE. A
# placeholder without a value stops with an ERROR naming it and the template.
render_template() {
	local tmpl=$DRAEXT_ROOT/scripts/cluster/templates/$1 out=$2 missing
	shift 2
	[[ -f $tmpl ]] || die "no template ${tmpl#"$DRAEXT_ROOT"/}"
	missing=$(env -i "$@" awk '
		{
			line = $0
			while (match(line, /\$\{[A-Za-z_][A-Za-z0-9_]*\}/)) {
				name = substr(line, RSTART + 2, RLENGTH - 3)
				if (!(name in ENVIRON)) { print name; exit }
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$tmpl") || die "reading the template ${tmpl#"$DRAEXT_ROOT"/} failed"
	[[ -z $missing ]] || die "template ${tmpl#"$DRAEXT_ROOT"/}: no value for \${$missing}"
	env -i "$@" awk '
		{
			out = ""
			line = $0
			while (match(line, /\$\{[A-Za-z_][A-Za-z0-9_]*\}/)) {
				out = out substr(line, 1, RSTART - 1) ENVIRON[substr(line, RSTART + 2, RLENGTH - 3)]
				line = substr(line, RSTART + RLENGTH)
			}
			print out line
		}' "$tmpl" >"$out.tmp" && mv "$out.tmp" "$out" || die "writing $out from ${tmpl#"$DRAEXT_ROOT"/} failed"
}

# require_own_cluster WHAT: a test target that starts its own local cluster
# and purges it at the end stops unless it runs as root and no cluster
# exists: never purge one that holds a user's state.
require_own_cluster() {
	[[ $(id -u) == 0 ]] || die "$1 starts a local cluster: run it as root"
	if [[ -f $PIDS/nodes || -d $STATE_DIR/etcd ]]; then
		die "a local cluster exists (running or stopped with its state)" "make down PURGE=1 first: $1 needs a cluster of its own"
	fi
}

# print_figures WHAT REPORT START: WHAT's duration since START and the lines
# of figures its e2e spec wrote into REPORT (drillReport).
print_figures() {
	log "$1 ($(($(now_s) - $3))s):"
	if [[ -s $2 ]]; then
		sed 's/^/    /' "$2" >&2
	else
		info "(no phase got to its figures)"
	fi
}
