#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make migrate-demo, on a running local cluster of two or more nodes with
# host-process drivers (make up NODES=2): the device-plugin node moves to DRA
# while a device-plugin pod runs on it, and back.
#   1. a nvidia.com/gpu pod runs on the device-plugin node (GPU G)
#   2. make migrate MIGRATE_TO=dra: the ResourceSlice leaves G out
#   3. a pod asking for every published GPU runs through DRA, without G; one
#      more pod stays Pending; the device-plugin pod keeps its container and G
#   4. the device-plugin pod ends: G is published and the pending pod gets it
#   5. back: the DRA pods are deleted, make migrate MIGRATE_TO=device-plugin,
#      and a nvidia.com/gpu pod runs through the device plugin again
# Fails with a message naming the step when something does not hold.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running" "make up NODES=2, then make migrate-demo"
nodes=$(cat "$PIDS/nodes")
((nodes >= 2)) || die "make migrate-demo needs a device-plugin node" "make down; make up NODES=2"
i=$nodes
ip=$(node_ip "$i")
[[ $(node_mode "$i") == device-plugin ]] || die "node $ip does not run the device plugin (mode $(node_mode "$i"))" "make migrate MIGRATE_NODE=$i MIGRATE_TO=device-plugin first"
NS=draext-migrate-demo
kubectl_ wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 || true
kubectl_ create namespace "$NS" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
trap 'kubectl_ delete namespace "$NS" --timeout=120s >/dev/null 2>&1' EXIT
T0=$(date +%s.%N)
step() { printf '==> [%5.1fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{print a-b}')" "$*" >&2; }

# run_pod NAME COUNT [WAIT]: the demo's nvidia.com/gpu pod as NAME, asking for
# COUNT GPUs, pinned to the node; waits until it is Ready unless WAIT=no.
run_pod() {
	local name=$1 count=$2
	sed -e "s/^  name: gpu-extended-resource-demo$/  name: $name/" -e "s|nvidia.com/gpu: 1$|nvidia.com/gpu: $count|" \
		-e "s/^spec:$/spec:\n  nodeSelector: {kubernetes.io\/hostname: \"$ip\"}/" \
		"$DRAEXT_ROOT/demo/extended-resource-pod.yaml" | kubectl_ -n "$NS" apply -f - >/dev/null
	[[ ${3:-} == no ]] && return
	kubectl_ -n "$NS" wait --for=condition=Ready "pod/$name" --timeout=90s >/dev/null ||
		die "pod $name did not start" "$(kubectl_ -n "$NS" describe pod "$name" | tail -12)"
}
gpus_of() { kubectl_ -n "$NS" logs "$1" | sed -n 's/^GPUS=//p'; }
# slice_uuids: the UUIDs of the GPUs in the node's ResourceSlices, one a line
# (read through v1beta1, whose devices have basic.attributes).
slice_uuids() {
	kubectl_ get resourceslices.v1beta1.resource.k8s.io --field-selector "spec.nodeName=$ip,spec.driver=gpu.draext.dev" \
		-o jsonpath='{range .items[*]}{range .spec.devices[*]}{.basic.attributes.uuid.string}{"\n"}{end}{end}' | { grep . || true; } | sort
}
container_of() { kubectl_ -n "$NS" get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}'; }
claim_of() { kubectl_ -n "$NS" get pod "$1" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}'; }

total=$(kubectl_ get node "$ip" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')
[[ $total =~ ^[1-9][0-9]*$ ]] || die "node $ip advertises nvidia.com/gpu '$total' through its device plugin"
step "1. a device-plugin pod on node $ip ($total GPUs)"
run_pod dp 1
held=$(gpus_of dp)
dp_container=$(container_of dp)
[[ -z $(claim_of dp) ]] || die "pod dp went through DRA, not through the device plugin"
step "   pod dp holds $held through the device plugin"

step "2. the node moves to DRA with pod dp running"
MIGRATE_NODE=$i MIGRATE_TO=dra bash "$DRAEXT_ROOT/scripts/cluster/migrate.sh"
published=$(slice_uuids)
grep -qx "$held" <<<"$published" && die "the ResourceSlice of node $ip publishes $held, which pod dp holds"
n=$(grep -c . <<<"$published" || true)
((n == total - 1)) || die "the ResourceSlice of node $ip has $n GPUs, want $((total - 1)) (all but $held)"
step "   the ResourceSlice has $n GPUs, not $held"

step "3. a pod asking for all $n published GPUs runs through DRA"
run_pod dra-all "$n"
[[ -n $(claim_of dra-all) ]] || die "pod dra-all has no extendedResourceClaimStatus"
got=$(gpus_of dra-all)
[[ ,$got, != *",$held,"* ]] || die "pod dra-all got $held, which pod dp holds"
step "   pod dra-all got $n GPUs through claim $(claim_of dra-all), not $held"
run_pod dra-next 1 no
sleep 5
[[ $(kubectl_ -n "$NS" get pod dra-next -o jsonpath='{.status.phase}') == Pending ]] || die "pod dra-next is not Pending while every free GPU is taken"
[[ $(container_of dp) == "$dp_container" && $(kubectl_ -n "$NS" get pod dp -o jsonpath='{.status.phase}') == Running ]] ||
	die "pod dp did not keep its container through the move"
step "   pod dra-next is Pending; pod dp runs on with its container"

step "4. pod dp ends: its GPU is published and goes to pod dra-next"
kubectl_ -n "$NS" delete pod dp --wait=true >/dev/null
kubectl_ -n "$NS" wait --for=condition=Ready pod/dra-next --timeout=90s >/dev/null ||
	die "pod dra-next did not start after pod dp gave $held back" "$(kubectl_ -n "$NS" describe pod dra-next | tail -12)"
[[ $(gpus_of dra-next) == "$held" ]] || die "pod dra-next got '$(gpus_of dra-next)', want $held"
step "   pod dra-next runs with $held"

step "5. back to the device plugin"
kubectl_ -n "$NS" delete pod dra-all dra-next --wait=true >/dev/null
deadline=$(($(now_s) + 60))
until [[ -z $(kubectl_ -n "$NS" get resourceclaims -o name) ]]; do
	(($(now_s) < deadline)) || die "the claims of the deleted DRA pods are still there after 60 s"
	sleep 1
done
MIGRATE_NODE=$i MIGRATE_TO=device-plugin bash "$DRAEXT_ROOT/scripts/cluster/migrate.sh"
run_pod dp-again 1
[[ -z $(claim_of dp-again) ]] || die "pod dp-again went through DRA after the move back"
step "   pod dp-again runs through the device plugin with $(gpus_of dp-again)"
kubectl_ -n "$NS" delete pod dp-again --wait=true >/dev/null
step "migrate-demo passed"
