#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# The README demo, on a running local cluster (make up): one GPU through a
# ResourceClaimTemplate, then one GPU through the extended resource
# nvidia.com/gpu in an unchanged pod manifest.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running: make up"
NS=draext-demo
kubectl_ wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 || true
kubectl_ create namespace "$NS" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
trap 'kubectl_ delete namespace "$NS" --timeout=120s >/dev/null 2>&1' EXIT

# show POD: where it runs, what it got, and how.
show() {
	{
	kubectl_ -n "$NS" get pod "$1" -o jsonpath='    node: {.spec.nodeName}{"\n"}    extendedResourceClaimStatus: {.status.extendedResourceClaimStatus}{"\n"}'
	kubectl_ -n "$NS" logs "$1" | sed 's/^/    container: /'
	} >&2
}

log "1. a GPU through a ResourceClaimTemplate (DRA)"
kubectl_ -n "$NS" apply -f "$DRAEXT_ROOT/demo/claim-pod.yaml" >/dev/null
t0=$(date +%s.%N)
kubectl_ -n "$NS" wait --for=condition=Ready pod/gpu-claim-demo --timeout=60s >/dev/null ||
	die "the claim pod did not start" "$(kubectl_ -n "$NS" describe pod gpu-claim-demo | tail -15)"
info "Running after $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')s"
show gpu-claim-demo
kubectl_ -n "$NS" get resourceclaims -o custom-columns='    CLAIM:.metadata.name,DEVICE:.status.allocation.devices.results[*].device,POOL:.status.allocation.devices.results[*].pool' >&2
kubectl_ -n "$NS" delete pod gpu-claim-demo --wait=true >/dev/null

log "2. a GPU through nvidia.com/gpu: 1 (unchanged manifest)"
kubectl_ -n "$NS" apply -f "$DRAEXT_ROOT/demo/extended-resource-pod.yaml" >/dev/null
t0=$(date +%s.%N)
kubectl_ -n "$NS" wait --for=condition=Ready pod/gpu-extended-resource-demo --timeout=60s >/dev/null 2>&1 || {
	kubectl_ -n "$NS" get pod gpu-extended-resource-demo -o jsonpath='    Pending: {.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}' >&2
	die "the nvidia.com/gpu pod did not start" "$(kubectl_ -n "$NS" describe pod gpu-extended-resource-demo | tail -15)"
}
info "Running after $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')s"
show gpu-extended-resource-demo
gpus=$(kubectl_ -n "$NS" logs gpu-extended-resource-demo | sed -n 's/^GPUS=//p')
[[ $gpus == GPU-* && $gpus != *,* ]] || die "the nvidia.com/gpu pod sees '${gpus}', not one GPU"
if [[ -z $(kubectl_ -n "$NS" get pod gpu-extended-resource-demo -o jsonpath='{.status.extendedResourceClaimStatus}') ]]; then
	info "served by the classic device plugin of node $(kubectl_ -n "$NS" get pod gpu-extended-resource-demo -o jsonpath='{.spec.nodeName}') (no extendedResourceClaimStatus)"
else
	kubectl_ -n "$NS" get resourceclaims -o custom-columns='    CLAIM:.metadata.name,DEVICE:.status.allocation.devices.results[*].device,POOL:.status.allocation.devices.results[*].pool' >&2
	info "served by DRA: the scheduler allocated the GPU in the pod's extended resource claim,"
	info "the kubelet prepared that claim and handed the container its CDI device"
fi
kubectl_ -n "$NS" delete pod gpu-extended-resource-demo --wait=true >/dev/null
