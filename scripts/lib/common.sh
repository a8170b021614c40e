# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# The shell basics of every draext script: strict mode, the repository root,
# the knobs (config.sh), messages (log, info, warn, die), tool checks, time
# and signals. Source it; do not run it.
# shellcheck disable=SC2034 # the settings are for the scripts that source this file

set -o errexit -o nounset -o pipefail

DRAEXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export DRAEXT_ROOT
# shellcheck source=config.sh
source "$DRAEXT_ROOT/scripts/lib/config.sh"

# Tools the scripts build (linters, etcd, draext-series); not a knob.
TOOLS_DIR=$OUTPUT_DIR/tools
PATCH_BRANCH=draext

# Never let Go fetch another toolchain behind our back, and keep builds
# independent of a VCS stamp (the trees we build are our own git repos).
export GOTOOLCHAIN=local
export LC_ALL=C
export GOFLAGS=${GOFLAGS:--buildvcs=false}

log() { printf '==> %s\n' "$*" >&2; }
info() { printf '    %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
# check_disk_space MIN_GIB WHAT DIR...: warn, without failing, when the file
# system of a DIR has less than MIN_GIB GiB free. A full disk fails a build in
# the middle with "no space left on device", and the Go build cache grows with
# every state of the series that is built (bisect, builds of other releases).
check_disk_space() {
	local min=$1 what=$2 dir free
	shift 2
	for dir in "$@"; do
		[[ -d $dir ]] || continue
		free=$(df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1048576) }')
		[[ $free =~ ^[0-9]+$ ]] || continue
		if ((free < min)); then
			warn "$what: only $free GiB free on the file system of $dir (want $min GiB); the Go build cache is $(go env GOCACHE 2>/dev/null): go clean -cache frees it, and the next builds are cold"
		fi
	done
}

die() {
	printf 'ERROR: %s\n' "$1" >&2
	shift
	local line
	for line in "$@"; do printf '       %s\n' "$line" >&2; done
	exit 1
}

# need_tool NAME HINT: stop with a clear message when a command is missing.
need_tool() {
	command -v "$1" >/dev/null 2>&1 || die "required tool '$1' is not installed" "$2"
}

need_base_tools() {
	need_tool git "install it: apt-get update && apt-get install -y git"
	need_tool go "install Go $GO_MIN_VERSION or newer (https://go.dev/dl) and put it on PATH"
	need_tool make "install it: apt-get update && apt-get install -y make"
}

# now_s: seconds since the epoch, for durations.
now_s() { date +%s; }
# timed NAME COMMAND...: run one step of a target and append "NAME <s>s" to
# the caller's array times (the figures a target prints at its end).
timed() {
	local name=$1 t
	shift
	t=$(now_s)
	"$@"
	times+=("$name $(($(now_s) - t))s")
}

# send_signal SIG PID: kill -SIG PID for teardown. A process that has exited
# meanwhile is not an error (it raced us to the goal); one that is still there
# and cannot be signalled gets a warning, and teardown goes on.
send_signal() {
	kill -s "$1" "$2" 2>/dev/null && return 0
	[[ -n $2 && -e /proc/$2 ]] || return 0
	warn "could not send SIG$1 to pid $2"
}

# api_probe BIN GV...: start the kube-apiserver BIN with --runtime-config
# enabling each GV (group/version) against an etcd that is not there, until
# it either refuses a version (it checks --runtime-config before it dials
# etcd) or dials etcd; print "accepted", "rejected <group/version>" or
# "unknown: <last line>" (make up on stock binaries of other releases).
api_probe() {
	local b=$1 dir pid out i runtime_config
	shift
	runtime_config=$(printf '%s=true,' "$@")
	dir=$(mktemp -d)
	openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null || { echo "unknown: openssl genrsa failed"; rm -rf "$dir"; return 0; }
	: >"$dir/log"
	"$b" --etcd-servers=http://127.0.0.1:9 --runtime-config="${runtime_config%,}" \
		--service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$dir/sa.key" \
		--service-account-signing-key-file="$dir/sa.key" --bind-address=127.0.0.1 --secure-port=1 \
		--cert-dir="$dir/certs" >"$dir/log" 2>&1 &
	pid=$!
	out="unknown: no answer in 60 s"
	local alive refused
	for ((i = 0; i < 120; i++)); do
		# Whether it runs, before the log is read: a server that writes
		# its refusal and exits between the reads is still read right.
		alive=1
		kill -0 "$pid" 2>/dev/null || alive=0
		if grep -q '127.0.0.1:9' "$dir/log"; then
			out=accepted
			break
		elif refused=$(grep -m1 -o 'group version [^ ]* that has not been registered' "$dir/log"); then
			out="rejected $(awk '{ print $3 }' <<<"$refused")"
			break
		elif ((!alive)); then
			out="unknown: $(grep -v '^[IW]' "$dir/log" | tail -1)"
			break
		fi
		sleep 0.5
	done
	# SIGKILL: on SIGTERM it would wait out its shutdown delay.
	kill -s KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
	echo "$out"
}

# gate_probe BIN GATE: run the Kubernetes server binary BIN so that it parses
# --feature-gates=GATE=true and then stops; print "accepted", "rejected" or
# "unknown: <last line>" (scripts/build/check-gates.sh, make up on stock binaries).
gate_probe() {
	local b=$1 gate=$2 out
	case $(basename "$b") in
	kubelet)
		# kubelet --version returns before it sets the gates. A node label in a
		# reserved domain fails flag validation, which comes right after them.
		out=$(timeout 30 "$b" --feature-gates="$gate=true" --node-labels=kubernetes.io/draext-gate-check=true 2>&1) || true
		if grep -q 'unrecognized feature gate' <<<"$out"; then echo rejected
		elif grep -q 'failed to validate kubelet flags' <<<"$out"; then echo accepted
		else echo "unknown: $(tail -1 <<<"$out")"; fi ;;
	*)
		if out=$(timeout 30 "$b" --feature-gates="$gate=true" --version 2>&1); then echo accepted
		elif grep -q 'unrecognized feature gate' <<<"$out"; then echo rejected
		else echo "unknown: $(tail -1 <<<"$out")"; fi ;;
	esac
}

# known_gates BIN GATES: the gates of the comma-separated Name=value list
# GATES that the Kubernetes binary BIN knows (gate_probe), in order; a gate
# a release removed would stop the component (make up on stock binaries).
known_gates() {
	local b=$1 g kept=()
	local -a gates
	IFS=, read -r -a gates <<<"$2"
	for g in "${gates[@]}"; do
		[[ $(gate_probe "$b" "${g%%=*}") != rejected ]] && kept+=("$g")
	done
	(
		IFS=,
		echo "${kept[*]}"
	)
}

# served_runtime_config BIN GV...: the --runtime-config value that enables
# each GV the kube-apiserver BIN serves (api_probe), GV=true comma-separated,
# in order; dies when the probe cannot tell.
served_runtime_config() {
	local b=$1 answer gv
	shift
	local -a gvs=("$@") enabled=()
	while ((${#gvs[@]} > 0)); do
		answer=$(api_probe "$b" "${gvs[@]}")
		case $answer in
		accepted) break ;;
		rejected\ *)
			local -a rest=()
			for gv in "${gvs[@]}"; do [[ $gv == "${answer#rejected }" ]] || rest+=("$gv"); done
			((${#rest[@]} < ${#gvs[@]})) || die "$b refuses ${answer#rejected }, which was not asked for"
			gvs=("${rest[@]}")
			;;
		*) die "cannot tell which API versions $b serves" "$answer" ;;
		esac
	done
	for gv in "${gvs[@]}"; do enabled+=("$gv=true"); done
	(
		IFS=,
		echo "${enabled[*]}"
	)
}

# release_runtime_config BIN: the --runtime-config of the resource.k8s.io
# versions that the stock kube-apiserver BIN serves, of those draext serves
# (served_runtime_config); dies when v1 is not among them (make up KBIN=,
# make upstream-upgrade-test).
release_runtime_config() {
	local config
	config=$(served_runtime_config "$1" resource.k8s.io/v1 resource.k8s.io/v1beta1 resource.k8s.io/v1beta2 resource.k8s.io/v1alpha3)
	[[ ,$config, == *,resource.k8s.io/v1=true,* ]] ||
		die "$1 does not serve resource.k8s.io/v1" "use a release from v1.34 on, or make build-base for v1.33"
	echo "$config"
}
