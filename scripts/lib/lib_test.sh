#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Checks of the shell helpers in scripts/lib/ that need no
# cluster, no Docker and no network: each failure path prints exactly one
# ERROR line, and build.sh's input hash (tree_inputs) changes when an
# untracked file appears, process control (proc.sh) starts, finds, restarts
# and stops a process, and templates are rendered. Runs in a few seconds in a
# scratch directory:
#
#   bash scripts/lib/lib_test.sh
set -o errexit -o nounset -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0 passed=0

pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$1"; shift; printf '      %s\n' "$@"; }
# errors TEXT: how many lines of TEXT start with ERROR:.
errors() { grep -c '^ERROR: ' <<<"$1" || true; }
# run_lib SCRIPT: SCRIPT in a fresh bash that sourced the libraries (and so
# common.sh, with its errexit); prints stdout and stderr, then "rc=<status>".
run_lib() {
	local rc=0 out
	out=$(bash -c "source '$HERE/cluster.sh'; source '$HERE/gomod.sh'; source '$HERE/series.sh'; source '$HERE/images.sh'; source '$HERE/perfdata.sh'; $1" 2>&1) || rc=$?
	printf '%s\nrc=%s\n' "$out" "$rc"
}

# --- go_mod_json_dir ---------------------------------------------------------
json=$(printf '{\n\t"Path": "a.example/x",\n\t"Version": "v1.0.0",\n\t"Dir": "/cache/a.example/x@v1.0.0",\n\t"Origin": {\n\t\t"Hash": "abc"\n\t}\n}\n{\n\t"Path": "b.example/y",\n\t"Version": "v2.0.0",\n\t"Error": "not found"\n}\n')
got=$(run_lib "go_mod_json_dir '$json' a.example/x; go_mod_json_dir '$json' b.example/y")
if [[ $got == $'/cache/a.example/x@v1.0.0\nrc=0' ]]; then pass "go_mod_json_dir: Dir of a module, nothing for one with an Error"; else fail "go_mod_json_dir" "$got"; fi

# --- check_disk_space --------------------------------------------------------
# A warning, never a failure: with an impossible minimum it names the
# directory and the way out; with 0 it says nothing.
got=$(run_lib "check_disk_space 100000000 'make test' '$T'; check_disk_space 0 'make test' '$T' /nonexistent; echo done")
if [[ $(grep -c '^WARNING: make test: only ' <<<"$got") == 1 && $got == *"file system of $T"* && $got == *"go clean -cache"* && $got == *$'done\nrc=0' ]]; then
	pass "check_disk_space: warns once below the minimum, quiet otherwise, never fails"
else
	fail "check_disk_space" "$got"
fi

# --- module_dir ----------------------------------------------------------------
# A version that is not in the cache, with the proxy off: one ERROR line that
# names module and version, status 1.
got=$(GOPROXY=off run_lib 'module_dir sigs.k8s.io/kind v0.0.0-draext-test; echo not reached')
if [[ $(errors "$got") == 1 && $got == *"ERROR: could not download sigs.k8s.io/kind@v0.0.0-draext-test"* && $got == *rc=1 && $got != *"not reached"* ]]; then
	pass "module_dir: a failed download stops with one ERROR line naming module@version"
else
	fail "module_dir: failed download" "$got"
fi
# The same failure inside $(...) under errexit, as the scripts call it.
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(GOPROXY=off run_lib 'src=$(module_dir sigs.k8s.io/kind v0.0.0-draext-test); echo "not reached $src"')
if [[ $(errors "$got") == 1 && $got == *rc=1 && $got != *"not reached"* ]]; then
	pass "module_dir: inside \$(...) the script stops after the one ERROR line"
else
	fail "module_dir in \$(...)" "$got"
fi
# A module already in the cache resolves offline (skipped when it is not there).
kind_version=$(bash -c "source '$HERE/config.sh'; echo \$KIND_VERSION")
if [[ -d $(go env GOMODCACHE)/sigs.k8s.io/kind@$kind_version ]]; then
	got=$(GOPROXY=off run_lib "module_dir sigs.k8s.io/kind $kind_version")
	if [[ $got == "$(go env GOMODCACHE)/sigs.k8s.io/kind@$kind_version"$'\nrc=0' ]]; then
		pass "module_dir: sigs.k8s.io/kind@$kind_version from the module cache"
	else
		fail "module_dir: cached module" "$got"
	fi
else
	printf 'skip  module_dir of a cached module (sigs.k8s.io/kind@%s is not in the module cache)\n' "$kind_version"
fi

# --- tree_inputs -------------------------------------------------------------
repo=$T/repo
mkdir -p "$repo/pkg"
git -C "$repo" init -q
printf 'package pkg\n' >"$repo/pkg/a.go"
printf '*.log\n' >"$repo/.gitignore"
git -C "$repo" add -A
git -C "$repo" -c user.name=t -c user.email=t@t commit -qm base
line="commit draext-test go-test -s -w selinux,notest"
# (The first line is cut from the whole output, not piped to head: bash's
# printf writes line by line, and a head that has exited would kill the
# second write with SIGPIPE, which pipefail and errexit turn into a silent
# exit of this script.)
h() {
	local out
	out=$(run_lib "tree_inputs '$repo' '$line'")
	printf '%s\n' "${out%%$'\n'*}"
}
h0=$(h)
old_clean=$(echo "$line" | sha256sum | cut -d' ' -f1)
if [[ $h0 == "$old_clean" ]]; then pass "tree_inputs: a clean tree hashes as before (existing build stamps stay valid)"; else fail "tree_inputs: clean tree" "$h0 != $old_clean"; fi
touch "$repo/pkg/new.go"
h1=$(h)
if [[ $h1 != "$h0" ]]; then pass "tree_inputs: an untracked .go file changes it"; else fail "tree_inputs: untracked .go file ignored"; fi
printf 'package pkg\n' >"$repo/pkg/new.go"
h2=$(h)
if [[ $h2 != "$h1" ]]; then pass "tree_inputs: editing the untracked file changes it again"; else fail "tree_inputs: untracked content ignored"; fi
touch "$repo/pkg/new_test.go" "$repo/build.log"
if [[ $(h) == "$h2" ]]; then pass "tree_inputs: untracked _test.go and ignored files do not count"; else fail "tree_inputs: _test.go or ignored file counted"; fi
rm -f "$repo/pkg/new.go" "$repo/pkg/new_test.go"
if [[ $(h) == "$h0" ]]; then pass "tree_inputs: removing the untracked file gives the clean hash again"; else fail "tree_inputs: not back to clean"; fi
printf '// changed\n' >>"$repo/pkg/a.go"
old_dirty=$({ echo "$line"; git -C "$repo" diff HEAD; } | sha256sum | cut -d' ' -f1)
if [[ $(h) == "$old_dirty" ]]; then pass "tree_inputs: a tree with tracked changes only hashes as before"; else fail "tree_inputs: dirty tree"; fi
got=$(run_lib "tree_inputs '$T/not-a-repo' x")
if [[ $(errors "$got") == 1 && $got == *rc=1 ]]; then pass "tree_inputs: no git tree gives one ERROR line"; else fail "tree_inputs: no git tree" "$got"; fi

# --- proc_log_tail, send_signal, docker_build -------------------------------------
got=$(run_lib "PROC_LOG_DIR='$T/logs'; proc_log_tail nothing-here 5; echo after")
if [[ $got == *after*rc=0 ]]; then pass "proc_log_tail: a missing log is no failure under errexit"; else fail "proc_log_tail" "$got"; fi
sleep 0 &
pid=$!
wait "$pid"
got=$(run_lib "send_signal TERM $pid; send_signal KILL $pid; echo after")
if [[ $got == $'after\nrc=0' ]]; then pass "send_signal: a process that already exited is no failure"; else fail "send_signal" "$got"; fi
mkdir -p "$T/fakebin"
printf '#!/bin/sh\necho "Step 1/2 : FROM scratch"\necho "COPY failed: no source files were specified" >&2\nexit 1\n' >"$T/fakebin/docker"
chmod +x "$T/fakebin/docker"
got=$(PATH=$T/fakebin:$PATH run_lib "docker_build '$T/build.log' localhost/x:1 '$T'; echo not reached")
if [[ $(errors "$got") == 1 && $got == *"ERROR: docker build of localhost/x:1 failed: COPY failed"* && $got == *"| Step 1/2"* && $got == *rc=1 && -s $T/build.log ]]; then
	pass "docker_build: a failed build shows its output and one ERROR line"
else
	fail "docker_build" "$got"
fi

# --- proc.sh: process control ---------------------------------------------------
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(run_lib 'PROC_DIR='"'$T/proc'"'
proc_define sleeper --ready test -e '"'$T/proc/ready'"' -- sleep 300
proc_start sleeper
proc_alive sleeper && echo alive
proc_find "sleep*" 300 && echo found
proc_find "sleep*" 299 || echo "not found with another argument"
touch '"'$T/proc/ready'"'
proc_wait sleeper 5 && echo ready
old=$(proc_pid sleeper)
proc_restart sleeper sleep 301 2>/dev/null
[[ $(proc_pid sleeper) != "$old" && ! -e /proc/$old/cmdline || $(awk "{print \$3}" /proc/$old/stat) == Z ]] && echo "old one gone"
proc_args sleeper | tr "\n" " "; echo
proc_stop sleeper 2>/dev/null
proc_alive sleeper || echo stopped
proc_signal sleeper KILL; echo not reached')
want=$'alive\nsleeper\nfound\nnot found with another argument\nready\nold one gone\nsleep 301 \nstopped'
if [[ $got == "$want"* && $(errors "$got") == 1 && $got == *"ERROR: sleeper is not running: no SIGKILL sent"* && $got == *rc=1 ]]; then
	pass "proc.sh: start, find by argument, wait ready, restart with a new command line, stop, no signal to a stopped process"
else
	fail "proc.sh" "$got"
fi
# A wrapper runs before the command line at every start, restarts included,
# and is not part of the command line that ctl.sh args shows.
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(run_lib 'PROC_DIR='"'$T/proc'"'
proc_define wrapped -- sleep 303
proc_wrap wrapped sh -c "echo \$0 >'"'$T/proc/wrapped.out'"' && exec \"\$@\"" first
proc_start wrapped
proc_wait wrapped 5 && cat '"'$T/proc/wrapped.out'"'
proc_alive wrapped && tr "\0" " " </proc/$(proc_pid wrapped)/cmdline; echo
rm '"'$T/proc/wrapped.out'"'
proc_restart wrapped sleep 304 2>/dev/null
cat '"'$T/proc/wrapped.out'"'
proc_args wrapped | tr "\n" " "; echo
proc_stop wrapped 2>/dev/null')
want=$'first
sleep 303 
first
sleep 304 '
if [[ $got == "$want"* && $(errors "$got") == 0 ]]; then
	pass "proc.sh: a wrapper runs before the command line at every start and execs it; the command line stays the recorded one"
else
	fail "proc_wrap" "$got"
fi
# A crash and a start right after it: a new process, under the same name.
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(run_lib 'PROC_DIR='"'$T/proc'"'
proc_define crashy -- sleep 302
proc_start crashy
old=$(proc_pid crashy)
proc_signal crashy KILL
proc_alive crashy || echo gone
proc_start crashy 2>/dev/null
proc_alive crashy && [[ $(proc_pid crashy) != "$old" ]] && echo "started again"
proc_stop crashy 2>/dev/null')
# (bash may report the killed job of its own: the process is its child here.)
if [[ $got == *$'gone\n'*$'started again\nrc=0' ]]; then pass "proc.sh: SIGKILL waits until the process is gone; a start then runs a new one"; else fail "proc.sh: SIGKILL and start" "$got"; fi
# A process that ignores SIGTERM is killed after the timeout.
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(run_lib 'PROC_DIR='"'$T/proc'"'
proc_define stubborn -- bash -c "trap \"\" TERM; while :; do sleep 0.1; done"
proc_start stubborn
sleep 0.5
proc_stop stubborn 1
proc_alive stubborn || echo killed')
if [[ $got == *"ignored SIGTERM for 1s; killing it"*killed*rc=0 ]]; then pass "proc.sh: SIGKILL after the timeout"; else fail "proc.sh: SIGKILL after the timeout" "$got"; fi
# A process that dies while it is awaited: one ERROR line with its log.
# shellcheck disable=SC2016 # expanded by the inner bash
got=$(run_lib 'PROC_DIR='"'$T/proc'"'
proc_define crasher --ready false -- bash -c "echo crash-reason; exit 3"
proc_start crasher
proc_wait crasher 10; echo not reached')
if [[ $(errors "$got") == 1 && $got == *"| crash-reason"* && $got == *"ERROR: crasher exited while waiting for crasher to be ready"* && $got == *rc=1 ]]; then
	pass "proc.sh: a process that dies while awaited stops the wait with its log"
else
	fail "proc.sh: dies while awaited" "$got"
fi

# --- render_template --------------------------------------------------------------
mkdir -p "$T/tmpl"
got=$(run_lib "render_template kubelet.yaml '$T/tmpl/k.yaml' NODE=1; echo not reached")
if [[ $(errors "$got") == 1 && $got == *'ERROR: template scripts/cluster/templates/kubelet.yaml: no value for ${NODE_IP}'* && $got == *rc=1 && ! -e $T/tmpl/k.yaml ]]; then
	pass "render_template: a placeholder without a value is one ERROR line naming it, and no file"
else
	fail "render_template: missing value" "$got"
fi
got=$(run_lib "render_template cni.conflist '$T/tmpl/c.json' NODE=7 NODE_DIR='/a b/\\\\x&y' POD_SUBNET=10.7.0.0/16 && cat '$T/tmpl/c.json'")
if [[ $got == *'"name": "draext-node7"'* && $got == *'"dataDir": "/a b/\\x&y/cni-ipam"'* && $got == *'"subnet": "10.7.0.0/16"'* && $got != *'${'* && $got == *rc=0 ]]; then
	pass "render_template: every placeholder replaced, values taken literally"
else
	fail "render_template: values" "$got"
fi

# --- gate_probe -------------------------------------------------------------------
# Fake server binaries: one that knows the gate (exits 0), one that refuses it
# as component-base does, one that fails otherwise; and kubelets, which never
# exit 0 on this probe.
mkdir -p "$T/gates/knows" "$T/gates/stock" "$T/gates/broken"
printf '#!/bin/sh\necho "Kubernetes v1.33.13-draext.1"\n' >"$T/gates/knows/kube-apiserver"
printf '#!/bin/sh\necho "E1202 unrecognized feature gate: ${1#--feature-gates=}" >&2; exit 1\n' >"$T/gates/stock/kube-apiserver"
printf '#!/bin/sh\necho "panic: something else" >&2; exit 2\n' >"$T/gates/broken/kube-apiserver"
printf '#!/bin/sh\necho "E1202 failed to validate kubelet flags: unknown node label" >&2; exit 1\n' >"$T/gates/knows/kubelet"
printf '#!/bin/sh\necho "E1202 unrecognized feature gate: X" >&2; exit 1\n' >"$T/gates/stock/kubelet"
chmod +x "$T"/gates/*/*
got=$(run_lib "gate_probe '$T/gates/knows/kube-apiserver' G; gate_probe '$T/gates/stock/kube-apiserver' G; gate_probe '$T/gates/broken/kube-apiserver' G; gate_probe '$T/gates/knows/kubelet' G; gate_probe '$T/gates/stock/kubelet' G")
if [[ $got == $'accepted\nrejected\nunknown: panic: something else\naccepted\nrejected\nrc=0' ]]; then
	pass "gate_probe: accepted, rejected and unknown, for server binaries and the kubelet"
else
	fail "gate_probe" "$got"
fi

# --- known_gates, served_runtime_config (api_probe) --------------------------------
# A fake release that removed the gate Old, and a fake kube-apiserver that
# refuses resource.k8s.io/v1beta1 the way kube-apiserver does and otherwise
# dials the (absent) etcd and stays up, as a real one does.
mkdir -p "$T/release"
cat >"$T/release/kube-apiserver" <<'FAKE'
#!/bin/bash
for a in "$@"; do
	case $a in
	--feature-gates=Old=*) echo "E1203 unrecognized feature gate: Old" >&2; exit 1 ;;
	--version) echo "Kubernetes v1.37.2"; exit 0 ;;
	--runtime-config=*resource.k8s.io/v1beta1=true*)
		echo 'E1203 run.go:72] "command failed" err="group version resource.k8s.io/v1beta1 that has not been registered"' >&2
		exit 1 ;;
	esac
done
echo 'W1203 grpc: addrConn.createTransport failed to connect to {Addr: "127.0.0.1:9"}' >&2
exec sleep 60
FAKE
chmod +x "$T/release/kube-apiserver"
got=$(run_lib "known_gates '$T/release/kube-apiserver' A=true,Old=true,B=false
served_runtime_config '$T/release/kube-apiserver' resource.k8s.io/v1 resource.k8s.io/v1beta1 resource.k8s.io/v1alpha3
api_probe '$T/release/kube-apiserver' resource.k8s.io/v1beta1")
if [[ $got == $'A=true,B=false\nresource.k8s.io/v1=true,resource.k8s.io/v1alpha3=true\nrejected resource.k8s.io/v1beta1\nrc=0' ]]; then
	pass "known_gates and served_runtime_config: a removed gate and an API version no longer served are left out"
else
	fail "known_gates, served_runtime_config" "$got"
fi

# --- kubectl_matches -------------------------------------------------------------
# A fake kubectl that prints its arguments after the flags kubectl_ adds (the
# per-cluster discovery cache among them), and fails for "get missing".
mkdir -p "$T/kbin"
cat >"$T/kbin/kubectl" <<'FAKE'
#!/bin/bash
[[ $3 == --cache-dir && -n $4 ]] || { echo "no --cache-dir: $*" >&2; exit 3; }
shift 4
[[ "$*" == "get missing" ]] && { echo "Error from server (NotFound)" >&2; exit 1; }
echo "$*"
FAKE
chmod +x "$T/kbin/kubectl"
got=$(run_lib "BIN_DIR='$T/kbin'
kubectl_matches '^get node 127.0.0.1 -o jsonpath=\{.status\}$' get node 127.0.0.1 -o 'jsonpath={.status}' && echo match
kubectl_matches 'True' get node x || echo no-match
kubectl_matches . get missing || echo failed")
if [[ $got == $'match\nno-match\nfailed\nrc=0' ]]; then
	pass "kubectl_matches: the output of kubectl_ against a regular expression; a failing kubectl is no match"
else
	fail "kubectl_matches" "$got"
fi

# --- node_mode, node_set_mode --------------------------------------------------
# A migrated node keeps its mode; a node at its default follows the default of
# a cluster of another size (NODES=2, then NODES=3: the device plugin moves to
# node 3, node 2 becomes a DRA node).
mkdir -p "$T/modes/pids"
got=$(run_lib "export STATE_DIR='$T/modes/state' PIDS='$T/modes/pids'
echo 2 >\$PIDS/nodes
echo \$(node_mode 1) \$(node_mode 2)
node_set_mode 2 device-plugin; [[ -e \$STATE_DIR/node2/mode ]] && echo recorded-default
node_set_mode 1 device-plugin; node_set_mode 2 dra; echo \$(node_mode 1) \$(node_mode 2)
node_set_mode 1 dra; node_set_mode 2 device-plugin
echo 3 >\$PIDS/nodes
echo \$(node_mode 1) \$(node_mode 2) \$(node_mode 3)
node_set_mode 3 sideways")
want=$'dra device-plugin\ndevice-plugin dra\ndra dra device-plugin'
if [[ $got == "$want"$'\n'*"ERROR: node_set_mode: mode 'sideways'"*"rc=1" && $(errors "$got") == 1 ]]; then
	pass "node_mode: migrated modes recorded, defaults follow the cluster's size"
else
	fail "node_mode" "$got"
fi

# --- perfdata: perf_item, perf_per, perf_median ---------------------------------
mkdir -p "$T/perf"
cat >"$T/perf/BenchmarkPerfScheduling_x.json" <<'JSON'
{"dataItems": [
 {"labels": {"Metric": "CPUPerPod", "Component": "kube-scheduler"}, "data": {"PerPod": 4.5}},
 {"labels": {"Metric": "CPUPerPod", "Component": "control plane"}, "data": {"PerPod": 15}},
 {"labels": {"Metric": "SchedulingThroughput"}, "data": {"Average": 120.5}}
]}
JSON
got=$(run_lib "perf_item '$T/perf' CPUPerPod PerPod 'Component=control plane'
perf_item '$T/perf' SchedulingThroughput Average
perf_item '$T/perf' CPUPerPod PerPod Component=etcd
perf_per 4.5 0.9; perf_per 1 0; perf_per - 2
printf '3\n-\n1\n2\n' | perf_median; printf '1\n4\n' | perf_median; printf -- '-\n' | perf_median")
want=$'15\n120.5\n-\n5.0000\n-\n-\n2\n2.5\n-\nrc=0'
if [[ $got == "$want" ]]; then
	pass "perfdata: items by labels, ratios and medians that leave out what is not a number"
else
	fail "perfdata" "$got"
fi

printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
