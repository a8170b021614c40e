#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Measures on a running local cluster (make up) how long a pod takes from
# kubectl apply to Ready: the demo's nvidia.com/gpu: 1 pod (DRA extended
# resource, KEP-5004) next to its claim-template pod, RUNS times each (default
# 10), alternating, one pod at a time. Prints every run and the medians.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running: make up"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$RUNS'"
NS=draext-latency
kubectl_ wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 || true
kubectl_ create namespace "$NS" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
trap 'kubectl_ delete namespace "$NS" --timeout=120s >/dev/null 2>&1' EXIT

# run MANIFEST POD: seconds from apply to Ready, then the pod is deleted.
run() {
	local t0 t1
	t0=$(date +%s.%N)
	kubectl_ -n "$NS" apply -f "$1" >/dev/null
	kubectl_ -n "$NS" wait --for=condition=Ready "pod/$2" --timeout=120s >/dev/null ||
		die "pod $2 did not become Ready" "$(kubectl_ -n "$NS" describe pod "$2" | tail -15)"
	t1=$(date +%s.%N)
	kubectl_ -n "$NS" delete pod "$2" --wait=true >/dev/null
	# The claim of the template pod goes with the pod; wait for it so that
	# the next run finds the device free.
	kubectl_ -n "$NS" wait --for=delete resourceclaims --all --timeout=60s >/dev/null 2>&1 || true
	awk -v a="$t1" -v b="$t0" 'BEGIN{printf "%.2f\n", a-b}'
}

median() { sort -n | awk '{v[NR]=$1} END{if (NR%2) print v[(NR+1)/2]; else printf "%.2f\n", (v[NR/2]+v[NR/2+1])/2}'; }

extended=() template=()
for i in $(seq 1 "$RUNS"); do
	extended+=("$(run "$DRAEXT_ROOT/demo/extended-resource-pod.yaml" gpu-extended-resource-demo)")
	template+=("$(run "$DRAEXT_ROOT/demo/claim-pod.yaml" gpu-claim-demo)")
	info "run $i: nvidia.com/gpu ${extended[-1]}s, claim template ${template[-1]}s"
done
me=$(printf '%s\n' "${extended[@]}" | median)
mt=$(printf '%s\n' "${template[@]}" | median)
log "median of $RUNS, apply to Ready: nvidia.com/gpu ${me}s, claim template ${mt}s (ratio $(awk -v a="$me" -v b="$mt" 'BEGIN{printf "%.2f", a/b}'))"
