#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make perf-upstream: draext beside stock Kubernetes v1.37.2 on v1.37.2's own
# scheduler_perf workloads for DRA extended resources, measured the same way
# on both trees, in interleaved rounds (ROUNDS, default 5), one run at a time.
#
# - Stock: a worktree of tag v1.37.2 of the forward series' tree
#   (_output/perf-upstream/v1.37.2), whose scheduler_perf gets draext's
#   collectors as test-only files: collectors.go, cpu*.go and
#   test/integration/util/apirequests.go copied from the draext tree (the
#   ktesting import rewritten), and the hooks of
#   scripts/test/perf-upstream/stock-harness.patch (the scheduler's own
#   client, pprof labels per component, the collectors in
#   getTestDataCollectors). Nothing outside test/integration changes.
# - draext: its scheduler_perf binary runs v1.37.2's
#   dra/extendedresource/performance-config.yaml and dra/templates unchanged,
#   copied from the worktree to _output/perf-upstream/workloads; draext's
#   harness has templateParams, Int and Mod, and enables resource.k8s.io/v1
#   and v1beta2, for them (patch "test: scheduler_perf templateParams ...").
# - Claim templates: each tree's own SchedulingWithResourceClaimTemplate/
#   2000pods_200nodes of scheduler_perf/dra (v1.37.2: the incubating
#   allocator; v1.33: its only one).
# - v1.37.2's BenchmarkPerfScheduling of dra/extendedresource uses the
#   experimental allocator; draext's series has one allocator.
#
# Per workload and tree: pods/s, create-to-bound p50/p99, scheduling attempt
# p99, kube-scheduler and control-plane CPU per pod (probe units: CPU time
# divided by the run's speed probe), medians of the rounds, and draext/stock
# as the median of the per-round ratios. Raw data in
# _output/perf-upstream/<time>/; REPORT=<that dir> prints the tables again.
#
#   ROUNDS=3        rounds (default 5; about 6 minutes a round on 2 cores)
#   WORKLOADS=...   a subset of: explicit implicit claimtemplate
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/perfdata.sh"

STOCK=v1.37.2
STOCK_BRANCH=v1.37
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, not '$ROUNDS'"
BASE=$OUTPUT_DIR/perf-upstream
WORKTREE=$BASE/$STOCK
STOCK_TREE=$OUTPUT_DIR/$STOCK_BRANCH/kubernetes
SP=test/integration/scheduler_perf

# name|stock package|stock workload|draext package|draext workload
ALL=(
	"explicit|dra/extendedresource|ExtendedResource/Explicit_25classes_2000pods_200nodes|upstream|ExtendedResource/Explicit_25classes_2000pods_200nodes"
	"implicit|dra/extendedresource|ExtendedResource/Implicit_25classes_2000pods_200nodes|upstream|ExtendedResource/Implicit_25classes_2000pods_200nodes"
	"claimtemplate|dra|SchedulingWithResourceClaimTemplate/2000pods_200nodes|dra|SchedulingWithResourceClaimTemplate/2000pods_200nodes"
)
read -r -a names <<<"${WORKLOADS:-explicit implicit claimtemplate}"
declare -A SPEC
for spec in "${ALL[@]}"; do SPEC[${spec%%|*}]=$spec; done
for n in "${names[@]}"; do
	[[ -n ${SPEC[$n]:-} ]] || die "WORKLOADS: '$n' is not one of explicit implicit claimtemplate"
done

# binary TREE PACKAGE: where the test binary of a package of a tree is.
binary() { echo "$BASE/bin/$1-${2//\//_}.test"; }

prepare_stock() {
	RELEASE_BRANCH=$STOCK_BRANCH "$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
	if [[ ! -d $WORKTREE ]]; then
		git -C "$STOCK_TREE" worktree add --detach "$WORKTREE" "refs/tags/$STOCK" >/dev/null
	fi
	# Start from the tag each time: the copied files and the hooks are
	# what the draext tree and the patch say now.
	git -C "$WORKTREE" checkout -q --detach "refs/tags/$STOCK"
	git -C "$WORKTREE" reset -q --hard
	git -C "$WORKTREE" clean -q -fd -- "$SP" test/integration/util
	local f
	for f in "$SP/collectors.go" "$SP/cpu.go" "$SP/cpu_linux.go" "$SP/cpu_other.go" test/integration/util/apirequests.go; do
		[[ -f $KUBE_TREE/$f ]] || die "the draext tree has no $f: the series lacks its scheduler_perf collectors"
		sed 's#"k8s.io/kubernetes/test/utils/ktesting"#"k8s.io/kubernetes/test/utils/client-go/ktesting"#' "$KUBE_TREE/$f" >"$WORKTREE/$f"
	done
	git -C "$WORKTREE" apply "$DRAEXT_ROOT/scripts/test/perf-upstream/stock-harness.patch" ||
		die "scripts/test/perf-upstream/stock-harness.patch does not apply to $STOCK"
	# The measurement may change the test harness only.
	local outside
	outside=$(git -C "$WORKTREE" status --porcelain | awk '{print $2}' | grep -v "^test/integration/" || true)
	[[ -z $outside ]] || die "the stock harness changes files outside test/integration: $outside"
}

build() {
	local tree=$1 dir=$2 pkg=$3 t0
	t0=$(now_s)
	mkdir -p "$BASE/bin"
	(cd "$dir" && go test -c -o "$(binary "$tree" "$pkg")" "./$SP/$pkg") || die "building the $tree scheduler_perf binary of $pkg failed"
	info "$tree $pkg: built in $(($(now_s) - t0)) s"
}

# run TREE NAME ROUND: one benchmark run into $OUT/round<ROUND>/<TREE>_<NAME>.
run() {
	local tree=$1 name=$2 round=$3 spkg sw dpkg dw pkg w cwd dir log
	IFS='|' read -r _ spkg sw dpkg dw <<<"${SPEC[$name]}"
	if [[ $tree == stock ]]; then
		pkg=$spkg w=$sw cwd=$WORKTREE/$SP/$spkg
	else
		w=$dw
		if [[ $dpkg == upstream ]]; then
			pkg=dra/extendedresource cwd=$BASE/workloads/dra/extendedresource
		else
			pkg=$dpkg cwd=$KUBE_TREE/$SP/$dpkg
		fi
	fi
	dir=$OUT/round$round/${tree}_$name
	mkdir -p "$dir"
	log=$dir/run.log
	# The stock workloads of dra/extendedresource carry no label: an empty
	# filter admits them.
	if ! (cd "$cwd" && "$(binary "$tree" "$pkg")" -test.run='^$' -test.bench="^BenchmarkPerfScheduling\$/^${w%%/*}\$/^${w#*/}\$" -test.benchtime=1x \
		-test.timeout=30m -data-items-dir="$dir" -perf-scheduling-label-filter=) >"$log" 2>&1; then
		die "$tree $name failed in round $round" "$(grep -E -- '--- FAIL|Error|error' "$log" | tail -5)" "log: $log"
	fi
	[[ $(perf_item "$dir" CPUPerPod PerPod Component=kube-scheduler) =~ ^[0-9][0-9.e+-]*$ ]] ||
		die "$tree $name in round $round reported no CPU time per pod" "log: $log"
}

if [[ -z ${REPORT:-} ]]; then
	need_tool jq "apt-get install jq"
	"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
	"$DRAEXT_ROOT/scripts/build/install-etcd.sh"
	export PATH="$TOOLS_DIR/etcd:$PATH"
	prepare_stock
	# v1.37.2's workloads for draext's binary, unchanged.
	rm -rf "$BASE/workloads"
	mkdir -p "$BASE/workloads/dra"
	cp -r "$WORKTREE/$SP/dra/extendedresource" "$WORKTREE/$SP/dra/templates" "$BASE/workloads/dra/"
	build stock "$WORKTREE" dra/extendedresource
	build stock "$WORKTREE" dra
	build draext "$KUBE_TREE" dra/extendedresource
	build draext "$KUBE_TREE" dra
	OUT=$BASE/$(date -u +%Y%m%dT%H%M%SZ)
	mkdir -p "$OUT"
	printf '%s\n' "${names[@]}" >"$OUT/workloads"
	echo "$ROUNDS" >"$OUT/rounds"
	for r in $(seq 1 "$ROUNDS"); do
		log "round $r of $ROUNDS"
		# Stock first in odd rounds, draext first in even ones.
		order=(stock draext)
		((r % 2)) || order=(draext stock)
		for n in "${names[@]}"; do
			for tree in "${order[@]}"; do
				t=$(now_s)
				run "$tree" "$n" "$r"
				info "$tree $n: $(perf_item "$OUT/round$r/${tree}_$n" SchedulingThroughput Average) pods/s ($(($(now_s) - t)) s)"
			done
		done
	done
else
	OUT=$(cd "$REPORT" 2>/dev/null && pwd) || die "REPORT: no directory $REPORT"
	mapfile -t names <"$OUT/workloads"
	ROUNDS=$(<"$OUT/rounds")
fi

# value TREE NAME ROUND KEY: one number of a run ("-" if none); KEY is
# tp, p50, p99, att99, sched (kube-scheduler CPU per pod in probe units) or
# cp (the control plane's).
value() {
	local dir=$OUT/round$3/$1_$2 v probe
	case $4 in
	tp) perf_item "$dir" SchedulingThroughput Average ;;
	p50) perf_item "$dir" PodCreateToBoundLatency Perc50 ;;
	p99) perf_item "$dir" PodCreateToBoundLatency Perc99 ;;
	att99) perf_item "$dir" scheduler_scheduling_attempt_duration_seconds Perc99 result=scheduled ;;
	sched | cp)
		probe=$(perf_item "$dir" SpeedProbe Perc50)
		if [[ $4 == sched ]]; then
			v=$(perf_item "$dir" CPUPerPod PerPod Component=kube-scheduler)
		else
			v=$(perf_item "$dir" CPUPerPod PerPod "Component=control plane")
		fi
		perf_per "$v" "$probe"
		;;
	esac
}
# med TREE NAME KEY: the median over the rounds.
med() {
	local r
	for r in $(seq 1 "$ROUNDS"); do value "$1" "$2" "$r" "$3"; done | perf_median
}
# ratio NAME KEY: the median of the per-round ratios draext/stock.
ratio() {
	local r
	for r in $(seq 1 "$ROUNDS"); do perf_per "$(value draext "$1" "$r" "$2")" "$(value stock "$1" "$r" "$2")"; done | perf_median
}

{
	printf '\n| workload | tree | pods/s | create→bound p50 / p99 ms | attempt p99 ms | kube-scheduler CPU/pod | control plane CPU/pod |\n|---|---|---|---|---|---|---|\n'
	for n in "${names[@]}"; do
		for tree in stock draext; do
			printf '| %s | %s | %s | %s / %s | %s | %s | %s |\n' "$n" "$tree" "$(med "$tree" "$n" tp)" "$(med "$tree" "$n" p50)" \
				"$(med "$tree" "$n" p99)" "$(med "$tree" "$n" att99)" "$(med "$tree" "$n" sched)" "$(med "$tree" "$n" cp)"
		done
	done
	printf '\n| draext / %s (median of per-round ratios) | pods/s | create→bound p99 | attempt p99 | kube-scheduler CPU/pod | control plane CPU/pod |\n|---|---|---|---|---|---|\n' "$STOCK"
	for n in "${names[@]}"; do
		printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$(ratio "$n" tp)" "$(ratio "$n" p99)" "$(ratio "$n" att99)" "$(ratio "$n" sched)" "$(ratio "$n" cp)"
	done
	printf '\nCPU per pod in probe units: CPU time divided by the run'"'"'s speed probe. %s round(s), %s.\n' "$ROUNDS" "${OUT#"$DRAEXT_ROOT"/}"
} | tee "$OUT/table.md"
