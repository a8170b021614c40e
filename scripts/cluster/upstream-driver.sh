#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Runs kubernetes-sigs/dra-example-driver (UPSTREAM_DRIVER_VERSION, default
# v0.4.0: k8s.io/dynamic-resource-allocation v0.36.2), built unmodified from
# the Go module proxy, as a host process on node 1 of a running local cluster
# (make up), as a user of a later release would: its DeviceClass created
# through resource.k8s.io/v1 with extendedResourceName example.com/gpu. Then
# it checks what docs/tools.md promises for it:
#   - it publishes its ResourceSlice once: generation 1, still 1 after 20 s
#     (no write loop over the fields 1.33 drops), and counts the log lines
#     that say fields were dropped;
#   - a pod asking for example.com/gpu: 1 and one asking for
#     deviceclass.resource.kubernetes.io/gpu.example.com: 2 run, each with
#     its own extended resource claim, their devices are disjoint, and each
#     container sees its devices in the environment the driver's CDI spec
#     sets.
# It prints the figures, and removes the driver, its slice, its class and
# the pods at the end.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running: make up"
kubectl_ api-versions | grep -qx resource.k8s.io/v1 ||
	die "the cluster does not serve resource.k8s.io/v1, through which this driver talks" "make up serves it unless RUNTIME_CONFIG= leaves it out"
version=$UPSTREAM_DRIVER_VERSION
driver=gpu.example.com
ns=draext-upstream-driver
node=$(node_ip 1) nd=$(node_dir 1)
out=$OUTPUT_DIR/upstream-driver
mkdir -p "$out"
start=$(now_s)

log "building sigs.k8s.io/dra-example-driver@$version (dra-example-kubeletplugin) from the Go module proxy, unmodified"
src=$(GOWORK=off module_dir sigs.k8s.io/dra-example-driver "$version") || die "could not download sigs.k8s.io/dra-example-driver@$version"
bin=$out/dra-example-kubeletplugin-$version
(cd "$src" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/dra-example-kubeletplugin) ||
	die "building dra-example-kubeletplugin $version failed (see above)"
dra=$(awk '$1 == "k8s.io/dynamic-resource-allocation" { print $2 }' "$src/go.mod")
info "built in $(($(now_s) - start))s, on k8s.io/dynamic-resource-allocation $dra"

# cleanup: best effort; what is already gone is fine. The pods go first,
# while the driver runs: the kubelet needs it to unprepare their claims,
# and without it the pods, and the namespace, stay Terminating.
cleanup() {
	kubectl_ delete namespace "$ns" --timeout=120s >/dev/null 2>&1 || true
	[[ -z ${pid:-} ]] || kill "$pid" 2>/dev/null || true
	kubectl_ delete deviceclass "$driver" >/dev/null 2>&1 || true
	kubectl_ delete resourceslices --field-selector "spec.driver=$driver" >/dev/null 2>&1 || true
	rm -rf "${nd:?}/kubelet/plugins/$driver"
}
# A namespace of an earlier run may still be going away.
deadline=$(($(now_s) + 120))
while kubectl_ get namespace "$ns" >/dev/null 2>&1; do
	(($(now_s) < deadline)) || die "namespace $ns of an earlier run is still there after 120 s"
	sleep 1
done
trap cleanup EXIT
kubectl_ create namespace "$ns" >/dev/null || die "cannot create namespace $ns"
kubectl_ apply -f - >/dev/null <<YAML || die "cannot create DeviceClass $driver through resource.k8s.io/v1"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: $driver
spec:
  selectors:
  - cel:
      expression: "device.driver == '$driver'"
  extendedResourceName: example.com/gpu
YAML

log "starting it on node $node (log: ${out#"$DRAEXT_ROOT"/}/driver.log)"
mkdir -p "$nd/kubelet/plugins/$driver"
# A clean environment: the driver reads its flags from variables too, and
# ours (FEATURE_GATES, ...) mean other things.
env -i PATH="$PATH" HOME="$HOME" "$bin" --node-name="$node" --kubeconfig="$PKI/draext-gpu.kubeconfig" --cdi-root="$nd/cdi" --num-devices=4 \
	--kubelet-registrar-directory-path="$nd/kubelet/plugins_registry" --kubelet-plugins-directory-path="$nd/kubelet/plugins" \
	>"$out/driver.log" 2>&1 &
pid=$!
slice() { kubectl_ get resourceslices --field-selector "spec.driver=$driver,spec.nodeName=$node" -o json; }
deadline=$(($(now_s) + 60))
until [[ $(slice | jq '.items | length') -ge 1 ]]; do
	kill -0 "$pid" 2>/dev/null || { tail -n 20 "$out/driver.log" >&2; die "the driver exited before it published a ResourceSlice"; }
	(($(now_s) < deadline)) || { tail -n 20 "$out/driver.log" >&2; die "no ResourceSlice of $driver on node $node after 60 s"; }
	sleep 1
done
sleep 20
generation=$(slice | jq '[.items[].metadata.generation] | max')
devices=$(slice | jq '[.items[].spec.devices | length] | add')
dropped=$(grep -c "fields were dropped" "$out/driver.log" || true)
info "ResourceSlice: $devices devices, generation $generation after 20 s; $dropped log line(s) saying fields were dropped"
[[ $generation == 1 ]] || die "the driver rewrote its ResourceSlice $generation times in 20 s: a write loop" "its log: ${out#"$DRAEXT_ROOT"/}/driver.log"

pod() { # NAME RESOURCE COUNT
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  nodeSelector:
    kubernetes.io/hostname: "$node"
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: localhost/draext/busybox:$BUSYBOX_TAG
    command: ["sh", "-c", "env | grep -i gpu | sort; sleep 3600"]
    resources:
      limits:
        $2: "$3"
YAML
}
{ pod explicit example.com/gpu 1; echo ---; pod implicit "deviceclass.resource.kubernetes.io/$driver" 2; } |
	kubectl_ -n "$ns" apply -f - >/dev/null || die "cannot create the pods"
kubectl_ -n "$ns" wait --for=condition=Ready pod/explicit pod/implicit --timeout=120s >/dev/null ||
	die "the pods did not run" "$(kubectl_ -n "$ns" describe pods)"
# devices POD: the devices of the pod's extended resource claim, one a line.
devices_of() {
	local claim
	claim=$(kubectl_ -n "$ns" get pod "$1" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
	[[ -n $claim ]] || die "pod $1 has no extended resource claim in its status"
	kubectl_ -n "$ns" get resourceclaim "$claim" -o json |
		jq -r '.status.allocation.devices.results[] | "\(.driver)/\(.pool)/\(.device)"'
}
explicit=$(devices_of explicit)
implicit=$(devices_of implicit)
[[ $(wc -l <<<"$explicit") == 1 && $(wc -l <<<"$implicit") == 2 ]] ||
	die "pod explicit got $(wc -l <<<"$explicit") device(s) and pod implicit $(wc -l <<<"$implicit"), not 1 and 2"
shared=$(comm -12 <(sort <<<"$explicit") <(sort <<<"$implicit"))
[[ -z $shared ]] || die "both pods got $shared"
grep -q "^$driver/" <<<"$explicit$implicit" || die "the devices are not the driver's: $explicit $implicit"
# The driver's CDI spec gives each container its devices as environment
# variables: the kubelet prepared the claims and handed them over.
for p in explicit implicit; do
	seen=$(kubectl_ -n "$ns" logs "$p" 2>/dev/null)
	for d in ${!p}; do
		grep -q "=${d##*/}\$" <<<"$seen" || die "pod $p does not see device ${d##*/} in its environment" "it printed: $seen"
	done
done
info "pod explicit (example.com/gpu: 1): $(paste -sd' ' <<<"$explicit")"
info "pod implicit (deviceclass.resource.kubernetes.io/$driver: 2): $(paste -sd' ' <<<"$implicit")"
log "dra-example-driver $version (k8s.io/dynamic-resource-allocation $dra) served unchanged pods through a class created through v1, disjoint devices ($(($(now_s) - start))s)"
