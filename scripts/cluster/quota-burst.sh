#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Runs on a running local cluster (make up) PODS (default 50) short-lived
# pods that ask for nvidia.com/gpu: 1 (DRA extended resource, KEP-5004), one
# after another as a ResourceQuota of GPUS (default: the DRA devices of the
# cluster) lets them in: a pod that the quota rejects is created again a
# little later. Then it checks that every pod Succeeded, that no
# ResourceClaim is left, and that the quota counts 0 in each of its three
# names, and prints how long each step took.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running: make up"
[[ $PODS =~ ^[1-9][0-9]*$ ]] || die "PODS must be a positive number, not '$PODS'"
CLASS=gpu.draext.dev
if [[ -z $GPUS ]]; then
	# Only the example driver's GPUs: the stock-library driver's mock GPUs
	# (compat/stockdriver) belong to another class.
	GPUS=$(kubectl_ get resourceslices -o jsonpath='{range .items[?(@.spec.driver=="gpu.draext.dev")]}{range .spec.devices[*]}x{"\n"}{end}{end}' | grep -c x) ||
		die "the cluster publishes no DRA devices (kubectl get resourceslices)"
fi
[[ $GPUS =~ ^[1-9][0-9]*$ ]] || die "GPUS must be a positive number, not '$GPUS'"
NS=draext-quota-burst
kubectl_ wait --for=delete "namespace/$NS" --timeout=120s >/dev/null 2>&1 || true
kubectl_ create namespace "$NS" >/dev/null || die "cannot create namespace $NS"
trap 'kubectl_ delete namespace "$NS" --timeout=120s >/dev/null 2>&1' EXIT
NAMES=("requests.nvidia.com/gpu" "requests.deviceclass.resource.kubernetes.io/$CLASS" "$CLASS.deviceclass.resource.k8s.io/devices")
kubectl_ -n "$NS" apply -f - >/dev/null <<YAML || die "cannot create the ResourceQuota"
apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpus
spec:
  hard:
    ${NAMES[0]}: "$GPUS"
    ${NAMES[1]}: "$GPUS"
    ${NAMES[2]}: "$GPUS"
YAML

# used: the quota's used values of the three names, "a b c".
used() {
	local out
	out=$(kubectl_ -n "$NS" get resourcequota gpus -o json) || return 1
	for n in "${NAMES[@]}"; do jq -r --arg n "$n" '.status.used[$n] // "unset"' <<<"$out"; done | paste -sd' '
}
wait_used() {
	local want=$1 got
	for _ in $(seq 1 600); do
		got=$(used) && [[ $got == "$want" ]] && return 0
		sleep 0.1
	done
	die "quota gpus counts '$got' in ${NAMES[*]}, not '$want'" "$(kubectl_ -n "$NS" describe resourcequota gpus)"
}
wait_used "0 0 0"

pod() {
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  dnsPolicy: Default
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: localhost/draext/busybox:$BUSYBOX_TAG
      command: ["sh", "-c", "sleep 1"]
      resources:
        limits:
          nvidia.com/gpu: 1
YAML
}

log "$PODS pods with nvidia.com/gpu: 1, a quota of $GPUS GPUs"
t0=$(date +%s.%N)
rejected=0
for i in $(seq 1 "$PODS"); do
	while ! out=$(pod "burst-$i" | kubectl_ -n "$NS" create -f - 2>&1); do
		[[ $out == *"exceeded quota: gpus"* ]] || die "cannot create pod burst-$i: $out"
		rejected=$((rejected + 1))
		sleep 0.2
	done
done
t1=$(date +%s.%N)
info "all created after $(awk -v a="$t1" -v b="$t0" 'BEGIN{printf "%.1f", a-b}') s; the quota rejected $rejected attempts"
for _ in $(seq 1 600); do
	done_=$(kubectl_ -n "$NS" get pods -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c Succeeded) || true
	[[ $done_ == "$PODS" ]] && break
	sleep 0.5
done
[[ $done_ == "$PODS" ]] || die "$done_ of $PODS pods Succeeded" "$(kubectl_ -n "$NS" get pods | grep -v Succeeded | head -10)"
t2=$(date +%s.%N)
kubectl_ -n "$NS" wait --for=delete resourceclaims --all --timeout=60s >/dev/null 2>&1 ||
	die "ResourceClaims are left" "$(kubectl_ -n "$NS" get resourceclaims)"
t3=$(date +%s.%N)
wait_used "0 0 0"
t4=$(date +%s.%N)
s() { awk -v a="$1" -v b="$t0" 'BEGIN{printf "%.1f", a-b}'; }
log "$PODS pods on $GPUS GPUs: all Succeeded $(s "$t2") s, no claim left $(s "$t3") s, quota 0 used $(s "$t4") s; $rejected creates rejected by quota"
kubectl_ -n "$NS" get resourcequota gpus
