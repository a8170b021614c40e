#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Measures the scheduler with DRA extended resources (KEP-5004) next to its
# baselines: builds the scheduler_perf binary of
# test/integration/scheduler_perf/dra/extendedresource once, runs each full
# workload ROUNDS times (default 5) in interleaved rounds, one at a time, and
# prints per workload the median and min-max SchedulingThroughput (pods/s),
# the median p50/p99 create-to-bound latency (ms) and kube-scheduler's API
# writes per pod before Bind, then the ratios that issue 15 sets targets for,
# as the median of the per-round ratios, and the scheduler's writes per pod
# by request. Raw data items (JSON) and logs go to _output/perf/<time>/.
#
#   ROUNDS=1       one round (about 10 minutes on 2 cores, plus 1 to build)
#   WORKLOADS=...  space-separated Case/workload names (default: all below)
#
# Nothing else should build or run meanwhile: the numbers are only as
# quiet as the machine.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, not '$ROUNDS'"
ALL=(
	ExtendedResource/2000pods_200nodes
	ExtendedResource_25Classes/2000pods_200nodes
	ExtendedResource_50Classes/2000pods_200nodes
	ImplicitExtendedResource/2000pods_200nodes
	ImplicitExtendedResource_25Classes/2000pods_200nodes
	ImplicitExtendedResource_50Classes/2000pods_200nodes
	ExtendedResourceScoring/2000pods_200nodes
	ExtendedResourceUnrelatedClaims/2000pods_200nodes
	ClaimTemplate/2000pods_200nodes
	DevicePlugin/2000pods_200nodes
	DevicePlugin/2000pods_200nodes_DRAExtendedResource
	ExtendedResourceChurn/200nodes_30s
	ClaimTemplateChurn/200nodes_30s
)
read -r -a workloads <<<"${WORKLOADS:-${ALL[*]}}"
for w in "${workloads[@]}"; do
	[[ $w =~ ^[A-Za-z0-9_]+/[A-Za-z0-9_]+$ ]] || die "WORKLOADS: '$w' is not Case/workload"
done

"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
"$DRAEXT_ROOT/scripts/build/install-etcd.sh"
export PATH="$TOOLS_DIR/etcd:$PATH"
PKG=test/integration/scheduler_perf/dra/extendedresource
[[ -d $KUBE_TREE/$PKG ]] || die "the tree has no $PKG: the series lacks its scheduler_perf workloads"
OUT=$OUTPUT_DIR/perf/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
BIN=$OUTPUT_DIR/perf/extendedresource.test

log "building the scheduler_perf binary of $PKG"
t0=$(now_s)
(cd "$KUBE_TREE" && go test -c -o "$BIN" "./$PKG") || die "building the scheduler_perf binary failed"
info "built in $(($(now_s) - t0)) s"

# run ROUND WORKLOAD: one benchmark run; its data items land in
# $OUT/round<ROUND>/<Case>_<workload>/.
run() {
	local round=$1 w=$2 dir log
	dir=$(run_dir "$round" "$w")
	mkdir -p "$dir"
	log=$dir/run.log
	# One iteration of the named workload.
	# Each level of a -test.bench pattern matches one level of names:
	# anchored, ExtendedResource does not also run ExtendedResource_25Classes.
	if ! (cd "$KUBE_TREE/$PKG" && "$BIN" -test.run='^$' -test.bench="^BenchmarkPerfScheduling\$/^${w%%/*}\$/^${w#*/}\$" -test.benchtime=1x \
		-test.timeout=30m -data-items-dir="$dir" -perf-scheduling-label-filter=performance) >"$log" 2>&1; then
		die "workload $w failed in round $round" "$(grep -E -- '--- FAIL|Error|error' "$log" | tail -5)" "log: $log"
	fi
	[[ $(item "$round" "$w" SchedulingThroughput Average) =~ ^[0-9.]+$ ]] ||
		die "workload $w in round $round reported no SchedulingThroughput" "log: $log"
}

run_dir() { echo "$OUT/round$1/${2//\//_}"; }

# item ROUND WORKLOAD METRIC FIELD [REQUEST]: a value of the measured
# operation's data items ("-" if there is none).
item() {
	local v
	v=$(jq -r --arg m "$3" --arg f "$4" --arg r "${5:-}" \
		'.dataItems[] | select(.labels.Metric == $m and ($r == "" or .labels.Request == $r)) | .data[$f]' \
		"$(run_dir "$1" "$2")"/*.json 2>/dev/null | head -1)
	echo "${v:--}"
}

declare -A tp p50 p99 writes
total=$(now_s)
for r in $(seq 1 "$ROUNDS"); do
	log "round $r of $ROUNDS"
	for w in "${workloads[@]}"; do
		t=$(now_s)
		run "$r" "$w"
		tp[$r,$w]=$(item "$r" "$w" SchedulingThroughput Average)
		# shellcheck disable=SC2034 # read through the namerefs of values and ratio
		p50[$r,$w]=$(item "$r" "$w" PodCreateToBoundLatency Perc50)
		p99[$r,$w]=$(item "$r" "$w" PodCreateToBoundLatency Perc99)
		writes[$r,$w]=$(item "$r" "$w" SchedulerAPIWrites PerPod "before Bind")
		info "$w: ${tp[$r,$w]} pods/s, p99 ${p99[$r,$w]} ms, ${writes[$r,$w]} writes/pod before Bind ($(($(now_s) - t)) s)"
	done
done

median() { sort -g | awk '{v[NR]=$1} END{if (NR==0) exit 1; if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
# median_or_dash: the median of the numbers among the lines, rounded, or "-".
median_or_dash() { grep -E '^[0-9.]+$' | median | awk '{printf "%.1f\n", $1}' || echo -; }
{
	# values ARRAY WORKLOAD: the workload's values of all rounds, one a line.
	values() {
		local -n a=$1
		for r in $(seq 1 "$ROUNDS"); do echo "${a[$r,$2]}"; done
	}
	printf '| workload | median pods/s | min-max | p50 ms | p99 ms | writes/pod before Bind |\n|---|---|---|---|---|---|\n'
	for w in "${workloads[@]}"; do
		vals=$(values tp "$w")
		printf '| %s | %.1f | %.1f-%.1f | %s | %s | %s |\n' "$w" "$(median <<<"$vals")" "$(sort -g <<<"$vals" | head -1)" "$(sort -g <<<"$vals" | tail -1)" \
			"$(values p50 "$w" | median_or_dash)" "$(values p99 "$w" | median_or_dash)" "$(values writes "$w" | median_or_dash)"
	done
	printf '\n| ratio | target | median of per-round ratios | per round |\n|---|---|---|---|\n'
	# ratio NAME TARGET A B [ARRAY]: A/B of ARRAY (default tp) per round.
	ratio() {
		local name=$1 target=$2 a=$3 b=$4 per
		local -n v=${5:-tp}
		[[ ${v[1,$a]:--} != - && ${v[1,$b]:--} != - ]] || return 0
		per=$(for r in $(seq 1 "$ROUNDS"); do awk -v x="${v[$r,$a]}" -v y="${v[$r,$b]}" 'BEGIN{printf "%.2f\n", x/y}'; done)
		printf '| %s | %s | %.2f | %s |\n' "$name" "$target" "$(median <<<"$per")" "$(paste -sd' ' <<<"$per")"
	}
	ratio "extended resource (25 classes) / claim template" "≥ 2.0" ExtendedResource_25Classes/2000pods_200nodes ClaimTemplate/2000pods_200nodes
	ratio "extended resource / device-plugin style (gate on)" "≥ 0.25" ExtendedResource/2000pods_200nodes DevicePlugin/2000pods_200nodes_DRAExtendedResource
	ratio "device-plugin style, gate on / gate off" "≥ 0.98" DevicePlugin/2000pods_200nodes_DRAExtendedResource DevicePlugin/2000pods_200nodes
	ratio "extended resource with scoring / without" "≥ 0.85" ExtendedResourceScoring/2000pods_200nodes ExtendedResource/2000pods_200nodes
	ratio "with 5000 unrelated claims / without" "≥ 0.90" ExtendedResourceUnrelatedClaims/2000pods_200nodes ExtendedResource/2000pods_200nodes
	ratio "implicit / explicit names (25 classes)" "-" ImplicitExtendedResource_25Classes/2000pods_200nodes ExtendedResource_25Classes/2000pods_200nodes
	ratio "50 classes / 1 class" "-" ExtendedResource_50Classes/2000pods_200nodes ExtendedResource/2000pods_200nodes
	ratio "p99 create→bound latency, extended resource / claim template, churn" "≤ 1.0" ExtendedResourceChurn/200nodes_30s ClaimTemplateChurn/200nodes_30s p99
	ratio "p50 create→bound latency, extended resource / claim template, churn" "-" ExtendedResourceChurn/200nodes_30s ClaimTemplateChurn/200nodes_30s p50
	# The scheduler's writes per pod by request, round 1, for the first
	# workloads of each kind that ran.
	shown=()
	for w in ExtendedResource/2000pods_200nodes ClaimTemplate/2000pods_200nodes DevicePlugin/2000pods_200nodes_DRAExtendedResource; do
		[[ -n ${tp[1,$w]:-} ]] && shown+=("$w")
	done
	if ((${#shown[@]})); then
		printf '\n| kube-scheduler writes per pod (round 1) |'
		printf ' %s |' "${shown[@]}"
		printf '\n|---|%s\n' "$(printf -- '---|%.0s' "${shown[@]}")"
		mapfile -t requests < <(for w in "${shown[@]}"; do
			jq -r '.dataItems[] | select(.labels.Metric == "SchedulerAPIWrites") | .labels.Request' "$(run_dir 1 "$w")"/*.json 2>/dev/null
		done | sort -u | grep -vx 'before Bind')
		for req in "${requests[@]}" "before Bind"; do
			printf '| %s |' "$req"
			for w in "${shown[@]}"; do printf ' %s |' "$(item 1 "$w" SchedulerAPIWrites PerPod "$req")"; done
			printf '\n'
		done
	fi
} | tee "$OUT/table.md"
log "make perf: $ROUNDS round(s) of ${#workloads[@]} workloads in $(($(now_s) - total)) s; raw data in $OUT"
