# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Process control: the one place that starts, stops, signals, restarts and
# checks the host processes the scripts run (the local cluster's components,
# draext's Docker engine). Source it; do not run it. scripts/cluster/ctl.sh is
# the command over it for the local cluster.
#
# A process NAME is kept in PROC_DIR (set it before use) as:
#   NAME.pid    "<pid> <program>": alive while /proc/<pid> runs a command
#               line that names <program> (a reused pid does not count)
#   NAME.cmd    the command line it was started with, one argument per line
#   NAME.ready  optional: a command line, one argument per line, that
#               succeeds once NAME is ready (a health URL through curl, ...)
#   NAME.wrap   optional: a command, one argument per line, that every start
#               puts before the command line (unshare ... for a kubelet); it
#               must exec the command line in the same process, and it is
#               not part of the command line that ctl.sh args shows or a
#               restart replaces
# and logs to PROC_LOG_DIR/NAME.log (default PROC_DIR).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PROC_DIR=${PROC_DIR:-}
PROC_LOG_DIR=${PROC_LOG_DIR:-}

proc_dir() {
	[[ -n $PROC_DIR ]] || die "PROC_DIR is not set (a bug in the calling script)"
	echo "$PROC_DIR"
}
proc_log() { echo "${PROC_LOG_DIR:-$(proc_dir)}/$1.log"; }

# proc_alive NAME: NAME's process runs and is still what we started.
proc_alive() {
	local pidf pid exe
	pidf=$(proc_dir)/$1.pid
	[[ -f $pidf ]] || return 1
	read -r pid exe <"$pidf" || true
	[[ -n $pid && -n ${exe:-} && -r /proc/$pid/cmdline ]] || return 1
	[[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$exe"
}

# proc_pid NAME: the pid in NAME's pid file (empty when there is none).
proc_pid() { awk '{print $1}' "$(proc_dir)/$1.pid" 2>/dev/null || true; }

# proc_args NAME: NAME's recorded command line, one argument per line.
proc_args() {
	local f
	f=$(proc_dir)/$1.cmd
	[[ -f $f ]] || die "no component $1: nothing was started under that name (in ${f%/*})"
	cat "$f"
}

# proc_names: every recorded name, sorted.
proc_names() {
	local f
	for f in "$(proc_dir)"/*.cmd; do
		[[ -e $f ]] || continue
		f=${f##*/}
		echo "${f%.cmd}"
	done | sort
}

# proc_log_tail NAME [LINES]: the last lines of NAME's log on stderr, for a
# failure report. Never fails: a missing log is said, not an error (callers
# run it right before die, under errexit).
proc_log_tail() {
	local f
	f=$(proc_log "$1")
	if [[ -f $f ]]; then
		tail -n "${2:-20}" "$f" | sed 's/^/    | /' >&2 || true
	else
		info "(no log ${f#"$DRAEXT_ROOT"/})"
	fi
}

# proc_define NAME [--ready ARG...] -- PROGRAM ARG...: record NAME's command
# line (PROGRAM may be "env VAR=value ... program") and its readiness check.
proc_define() {
	local name=$1 dir ready=() arg
	shift
	dir=$(proc_dir)
	if [[ ${1:-} == --ready ]]; then
		shift
		while [[ $# -gt 0 && $1 != -- ]]; do ready+=("$1") && shift; done
	fi
	[[ ${1:-} == -- ]] || die "proc_define $name: the command line must follow -- (a bug in the calling script)"
	shift
	[[ $# -gt 0 ]] || die "proc_define $name: no command line"
	for arg in "$@" "${ready[@]}"; do
		[[ $arg != *$'\n'* ]] || die "proc_define $name: an argument contains a newline: ${arg%%$'\n'*}..."
	done
	mkdir -p "$dir"
	printf '%s\n' "$@" >"$dir/$name.cmd"
	if [[ ${#ready[@]} -gt 0 ]]; then
		printf '%s\n' "${ready[@]}" >"$dir/$name.ready"
	else
		rm -f "$dir/$name.ready"
	fi
}

# proc_wrap NAME ARG...: record the wrapper of NAME's command line (see
# NAME.wrap above); no ARG removes it.
proc_wrap() {
	local name=$1 dir arg
	shift
	dir=$(proc_dir)
	for arg in "$@"; do
		[[ $arg != *$'\n'* ]] || die "proc_wrap $name: an argument contains a newline: ${arg%%$'\n'*}..."
	done
	mkdir -p "$dir"
	if [[ $# -gt 0 ]]; then
		printf '%s\n' "$@" >"$dir/$name.wrap"
	else
		rm -f "$dir/$name.wrap"
	fi
}

# proc_program ARG...: the program of a command line, past "env VAR=value".
proc_program() {
	if [[ ${1:-} == env ]]; then
		shift
		while [[ ${1:-} == *=* ]]; do shift; done
	fi
	echo "${1:-}"
}

# proc_start NAME [append]: start NAME with its recorded command line in its own
# session, unless it runs already. A pid file whose process is gone means it
# crashed: that is said with the end of its log. The log is rotated to .prev,
# or appended to with "append".
proc_start() {
	local name=$1 mode=${2:-rotate} dir log args=() wrap=()
	dir=$(proc_dir)
	if proc_alive "$name"; then
		info "$name is running (pid $(proc_pid "$name"))"
		return 0
	fi
	if [[ -f $dir/$name.pid ]]; then
		warn "$name (pid $(proc_pid "$name")) is not running any more; last lines of its log:"
		proc_log_tail "$name"
	fi
	mapfile -t args < <(proc_args "$name")
	wrap=()
	[[ -f $dir/$name.wrap ]] && mapfile -t wrap <"$dir/$name.wrap"
	log=$(proc_log "$name")
	mkdir -p "${log%/*}"
	if [[ $mode == rotate && -f $log ]]; then mv "$log" "$log.prev"; fi
	setsid "${wrap[@]}" "${args[@]}" >>"$log" 2>&1 </dev/null &
	local pid=$! i
	echo "$pid $(proc_program "${args[@]}")" >"$dir/$name.pid"
	# Until the forked shell has exec'd the program, its command line is
	# the shell's and proc_alive says "not alive": a proc_wait right after
	# this took it for a program that had exited (make docker-up failed so).
	for ((i = 0; i < 100; i++)); do
		proc_alive "$name" || pid_exited "$pid" || { sleep 0.05; continue; }
		break
	done
}

# pid_exited PID: the process has exited completely: no /proc entry, or a
# zombie. Its command line empties before it closes its files and sockets, so
# proc_alive says "not alive" earlier, while its ports are still bound.
pid_exited() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
	[[ -z $state || $state == Z ]]
}

# proc_wait_exit PID SECONDS: until pid_exited PID; status 1 on the timeout.
proc_wait_exit() {
	local deadline=$(($(now_s) + $2))
	until pid_exited "$1"; do
		(($(now_s) < deadline)) || return 1
		sleep 0.1
	done
}

# proc_signal NAME SIG: send SIG (TERM, KILL, HUP, ...) to NAME. Only after
# KILL does it wait (up to 10 s) until the process is gone, so that a start
# right after it starts a new one.
proc_signal() {
	local pid
	proc_alive "$1" || die "$1 is not running: no SIG$2 sent"
	pid=$(proc_pid "$1")
	kill -s "$2" "$pid" || die "could not send SIG$2 to $1 (pid $pid)"
	[[ $2 == KILL || $2 == 9 ]] || return 0
	proc_wait_exit "$pid" 10 || die "$1 (pid $pid) is still there 10 s after SIGKILL"
}

# proc_stop NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS (15). A
# zombie counts as stopped (PID 1 may reap slowly); a process that exits on
# its own meanwhile is no error.
proc_stop() {
	local name=$1 timeout=${2:-15} pid deadline
	proc_alive "$name" || { rm -f "$(proc_dir)/$name.pid"; return 0; }
	pid=$(proc_pid "$name")
	send_signal TERM "$pid"
	deadline=$(($(now_s) + timeout))
	while proc_alive "$name" && (($(now_s) < deadline)); do sleep 0.2; done
	if proc_alive "$name"; then
		warn "$name (pid $pid) ignored SIGTERM for ${timeout}s; killing it"
		send_signal KILL "$pid"
	fi
	# Until it has released its ports and files: a start right after must
	# not find them taken.
	proc_wait_exit "$pid" 10 || warn "$name (pid $pid) has not exited 10 s after it was stopped"
	rm -f "$(proc_dir)/$name.pid"
	info "stopped $name"
}

# proc_ready NAME: NAME's readiness check passes (no check: it runs).
proc_ready() {
	local f check=()
	f=$(proc_dir)/$1.ready
	[[ -f $f ]] || { proc_alive "$1"; return; }
	mapfile -t check <"$f"
	"${check[@]}" >/dev/null 2>&1
}

# proc_wait NAME SECONDS [OTHER...]: until NAME is ready; NAME or any OTHER
# dying meanwhile stops the wait with its log, as does the timeout.
proc_wait() {
	local name=$1 timeout=$2 deadline n
	shift 2
	deadline=$(($(now_s) + timeout))
	until proc_ready "$name"; do
		for n in "$name" "$@"; do
			proc_alive "$n" || {
				proc_log_tail "$n" 30
				die "$n exited while waiting for $name to be ready (log: $(proc_log "$n" | sed "s|^$DRAEXT_ROOT/||"))"
			}
		done
		(($(now_s) < deadline)) || die "$name is not ready after ${timeout}s (check: $(tr '\n' ' ' <"$(proc_dir)/$name.ready" 2>/dev/null))"
		sleep 0.2
	done
}

# proc_find GLOB [ARG...]: the running processes whose name matches GLOB and
# whose command line holds every ARG as a whole argument; status 1 for none.
proc_find() {
	local glob=$1 name found=1 want have=()
	shift
	while IFS= read -r name; do
		# shellcheck disable=SC2053 # GLOB is a pattern on purpose
		[[ $name == $glob ]] && proc_alive "$name" || continue
		mapfile -t have < <(proc_args "$name")
		for want in "$@"; do
			printf '%s\n' "${have[@]}" | grep -qxF -- "$want" || continue 2
		done
		echo "$name"
		found=0
	done < <(proc_names)
	return $found
}

# proc_restart NAME [PROGRAM ARG...]: stop NAME, start it again (log
# appended) with its recorded command line or with the one given, which is
# recorded instead, and wait up to 120 s until it is ready.
proc_restart() {
	local name=$1 ready=()
	shift
	proc_args "$name" >/dev/null
	proc_stop "$name"
	if [[ $# -gt 0 ]]; then
		[[ -f $(proc_dir)/$name.ready ]] && mapfile -t ready <"$(proc_dir)/$name.ready"
		if [[ ${#ready[@]} -gt 0 ]]; then
			proc_define "$name" --ready "${ready[@]}" -- "$@"
		else
			proc_define "$name" -- "$@"
		fi
	fi
	proc_start "$name" append
	proc_wait "$name" 120
	info "restarted $name (pid $(proc_pid "$name"))"
}
