#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Reading scheduler_perf's data items (make perf, make perf-upstream):
# sourced, needs jq.

# perf_item DIR METRIC FIELD [LABEL=VALUE...]: a value of the data items in
# DIR/*.json whose labels match ("-" if there is none).
perf_item() {
	local dir=$1 v labels='{}' kv
	for kv in "${@:4}"; do
		labels=$(jq -c --arg k "${kv%%=*}" --arg v "${kv#*=}" '. + {($k): $v}' <<<"$labels")
	done
	v=$(jq -r --arg m "$2" --arg f "$3" --argjson l "$labels" \
		'.dataItems[] | select(.labels.Metric == $m and (.labels as $have | all($l | to_entries[]; $have[.key] == .value))) | .data[$f] // empty' \
		"$dir"/*.json 2>/dev/null) || true
	# The first value only, cut here rather than by a head that could kill
	# jq with SIGPIPE (a failure under pipefail).
	v=${v%%$'\n'*}
	echo "${v:--}"
}

# perf_per A B: A / B with four decimals, "-" unless both are numbers and B
# is not zero.
perf_per() {
	if [[ $1 =~ ^-?[0-9][0-9.e+-]*$ && $2 =~ ^-?[0-9][0-9.e+-]*$ ]]; then
		awk -v a="$1" -v b="$2" 'BEGIN{if (b == 0) print "-"; else printf "%.4f\n", a/b}'
	else
		echo -
	fi
}

# perf_median: the median of the numbers on stdin (other lines are left
# out), with up to four significant decimals; "-" if there is none.
perf_median() {
	{ grep -E '^-?[0-9][0-9.e+-]*$' || true; } | sort -g |
		awk '{v[NR]=$1} END{if (NR==0) {print "-"; exit} if (NR%2) m=v[(NR+1)/2]; else m=(v[NR/2]+v[NR/2+1])/2; printf "%.4g\n", m}'
}
