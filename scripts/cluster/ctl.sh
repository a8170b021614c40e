#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# ctl.sh COMMAND [NAME] ...: control one component of the local cluster by
# name (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd<i>, kubelet<i>, draext-gpu<i>), the way make up started it. The
# one owner of the cluster's processes, over scripts/lib/proc.sh: make up and
# make down, the e2e suite (E2E_CLUSTER_CTL) and the drills use it.
#
#   list                        NAME PID STATE, one line each
#   find GLOB [ARG...]          names matching GLOB whose command line has every ARG
#   args NAME                   its command line, one argument per line
#   start NAME                  start it with its command line unless it runs; wait until ready
#   stop NAME [SECONDS]         SIGTERM, SIGKILL after SECONDS (15)
#   signal NAME SIG             send SIG (TERM, KILL, ...) and return
#   restart NAME [-- PROG ARG...]  stop, start (with PROG ARG... as its new command line), wait until ready
#   wait NAME [SECONDS]         until its readiness check passes (120)
# Logs: _output/cluster/logs/NAME.log (a restart appends).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

usage() { die "usage: ctl.sh list | find GLOB [ARG...] | args NAME | start NAME | stop NAME [SECONDS] | signal NAME SIG | restart NAME [-- PROG ARG...] | wait NAME [SECONDS]"; }

[[ -d $PIDS ]] || die "no local cluster: ${PIDS#"$DRAEXT_ROOT"/} does not exist" "make up first"
cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
list)
	while IFS= read -r name; do
		if proc_alive "$name"; then
			echo "$name $(proc_pid "$name") running"
		else
			echo "$name - stopped"
		fi
	done < <(proc_names)
	;;
find)
	[[ $# -ge 1 ]] || usage
	proc_find "$@"
	;;
args)
	[[ $# -eq 1 ]] || usage
	proc_args "$1"
	;;
start)
	[[ $# -eq 1 ]] || usage
	proc_args "$1" >/dev/null
	proc_start "$1" append
	proc_wait "$1" 120
	;;
stop)
	[[ $# -ge 1 && $# -le 2 ]] || usage
	proc_args "$1" >/dev/null
	proc_stop "$@"
	;;
signal)
	[[ $# -eq 2 ]] || usage
	proc_signal "$1" "${2#SIG}"
	;;
restart)
	[[ $# -ge 1 ]] || usage
	name=$1
	shift
	if [[ $# -gt 0 ]]; then
		[[ $1 == -- && $# -ge 2 ]] || usage
		shift
	fi
	proc_restart "$name" "$@"
	;;
wait)
	[[ $# -ge 1 && $# -le 2 ]] || usage
	proc_args "$1" >/dev/null
	proc_wait "$1" "${2:-120}"
	;;
*) usage ;;
esac
