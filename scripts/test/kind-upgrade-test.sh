#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make kind-upgrade-test: a kubeadm cluster on kind upgraded in place from
# stock v1.33.13 to the release, with GPU pods running, then
# DRAExtendedResource turned on one component at a time. Every command that
# touches the cluster is the one of the runbook in docs/upgrades.md ("A
# kubeadm cluster on kind"), run on the kind nodes with docker exec:
#
#   1. make release; the stock node image (node-image.sh BASE=1:
#      localhost/draext/kind-node:v1.33.13, make build-base's binaries);
#      kind-configs/multi-node-offline.yaml without DRAExtendedResource
#      (stock components refuse the gate), the release's driver and overlays;
#   2. two claim-template GPU pods (one per worker) and an nvidia.com/gpu pod,
#      which stock v1.33.13 leaves Pending ("Insufficient nvidia.com/gpu");
#   3. the release's images loaded on every node, its kubeadm installed,
#      kubeadm upgrade apply on the control plane, kubeadm upgrade node on
#      the workers, every kubelet replaced and restarted;
#   4. the gate on in ConfigMaps kubeadm-config and kubelet-config, in the
#      order kube-apiserver, kube-controller-manager, kubelets,
#      kube-scheduler (tools/draext-kubeadm-config --set-gate, then kubeadm
#      upgrade apply / kubeadm upgrade node phase kubelet-config), and the
#      release's overlays applied again (extendedResourceName);
#   5. asserted: the claim-template pods kept their containers (same IDs, no
#      restart) and GPUs, the Pending pod and a new nvidia.com/gpu pod run
#      through DRA (extendedResourceClaimStatus, one GPU each), every node
#      and control-plane component reports the release's version.
# Figures go to _output/kind/upgrade-report.txt. The cluster is deleted at
# the end, also when a step failed (KEEP_KIND=1 keeps it).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

[[ $(id -u) == 0 ]] || die "make kind-upgrade-test needs root (Docker, kind)"
VERSION=$(draext_version)
STOCK=$(git_tag)
REL=$OUTPUT_DIR/release/$VERSION
KDIR=$OUTPUT_DIR/kind
KIND=$KDIR/bin/kind
NAME=draext
CP=$NAME-control-plane
KCFG=$KDIR/kubeconfig
REPORT=$KDIR/upgrade-report.txt
NS=upgrade
GATE=DRAExtendedResource
start=$(now_s)
times=()
report=()
figure() {
	report+=("$*")
	info "$*"
}
kc() { "$REL/bin/kubectl" --kubeconfig "$KCFG" "$@"; }

timed release bash "$DRAEXT_ROOT/scripts/build/release.sh"
timed docker-up bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" up
eval "$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env | sed 's/^/export DOCKER_HOST=/')"
if [[ ${KEEP_KIND:-0} != 1 ]]; then
	trap 'bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" down' EXIT
fi
KEEP_DOCKER=1 bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" down >/dev/null 2>&1 || true

# 1. Stock v1.33.13.
stock_image=localhost/draext/kind-node:$STOCK
timed node-image-stock env BASE=1 NODE_IMAGE="$stock_image" bash "$DRAEXT_ROOT/scripts/kind/node-image.sh"
stock_config=$KDIR/multi-node-offline-stock.yaml
# A stock kube-apiserver refuses resource.k8s.io/v1 (the series' topic
# resource-v1) in --runtime-config: the stock cluster goes without it.
sed "/^  $GATE: /d; /^  resource.k8s.io\/v1: /d" "$DRAEXT_ROOT/kind-configs/multi-node-offline.yaml" >"$stock_config"
! grep -q "$GATE" <(grep -v '^ *#' "$stock_config") || die "could not take $GATE out of kind-configs/multi-node-offline.yaml"
timed kind-up-stock env RELEASE_DIR="$REL" KIND_CONFIG="$stock_config" NODE_IMAGE="$stock_image" \
	bash "$DRAEXT_ROOT/scripts/kind/cluster.sh" up
server=$(kc version -o json | jq -r .serverVersion.gitVersion)
[[ $server == "$STOCK" ]] || die "the stock cluster's API server is $server, not $STOCK"
mapfile -t nodes < <("$KIND" get nodes --name "$NAME" | sort)
mapfile -t workers < <(printf '%s\n' "${nodes[@]}" | grep -v -- -control-plane)
((${#workers[@]} == 2)) || die "want two workers, the cluster has: ${nodes[*]}"
[[ -z $(kc get deviceclass gpu.draext.dev -o jsonpath='{.spec.extendedResourceName}') ]] ||
	die "the stock API server stored extendedResourceName"

# 2. GPU pods on stock.
log "stock $STOCK: two claim-template GPU pods and an nvidia.com/gpu pod"
# pod NAME NODE KIND: a busybox pod on NODE that prints its GPU variables
# and waits; KIND template: one GPU through a ResourceClaimTemplate,
# extended: nvidia.com/gpu: 1.
pod() {
	local name=$1 node=$2 kind=$3 claims='' resources
	if [[ $kind == template ]]; then
		claims='resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]'
		resources='{claims: [{name: gpu}]}'
	else
		resources='{limits: {nvidia.com/gpu: 1}}'
	fi
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $NS}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  terminationGracePeriodSeconds: 1
  $claims
  containers:
  - name: c
    image: $E2E_IMAGE
    imagePullPolicy: Never
    command: [sh, -c, 'env | grep ^DRAEXT_GPU_; sleep 86400']
    resources: $resources
YAML
}
{
	echo "{apiVersion: v1, kind: Namespace, metadata: {name: $NS}}"
	echo ---
	echo "{apiVersion: resource.k8s.io/v1beta1, kind: ResourceClaimTemplate, metadata: {name: gpu, namespace: $NS}, spec: {spec: {devices: {requests: [{name: gpu, deviceClassName: gpu.draext.dev}]}}}}"
	for i in 0 1; do
		echo ---
		pod "template-$i" "${workers[$i]}" template
	done
	echo ---
	pod extended-stock "${workers[0]}" extended
} | kc apply -f - >/dev/null || die "creating the stock workload failed"
kc -n "$NS" wait --for=condition=Ready pod/template-0 pod/template-1 --timeout=120s >/dev/null ||
	die "the claim-template pods did not get Ready on stock $STOCK"
# containers POD...: the container ID and restart count of each pod.
containers() {
	local p
	for p in "$@"; do
		kc -n "$NS" get pod "$p" -o jsonpath='{.metadata.name} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}{"\n"}'
	done
}
# gpus POD: the GPU UUIDs the pod's container printed, sorted, one line.
gpus() { kc -n "$NS" logs "$1" | sed -n 's/^DRAEXT_GPU_[A-Z0-9_]*=//p' | sort | paste -sd, -; }
before=$(containers template-0 template-1)
gpus_before="$(gpus template-0) $(gpus template-1)"
[[ $gpus_before =~ ^[^\ ]+\ [^\ ]+$ ]] || die "the claim-template pods did not get a GPU each: '$gpus_before'"
deadline=$(($(now_s) + 60))
until msg=$(kc -n "$NS" get pod extended-stock -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}') &&
	[[ $msg == *"Insufficient nvidia.com/gpu"* ]]; do
	(($(now_s) < deadline)) || die "the nvidia.com/gpu pod is not Pending with 'Insufficient nvidia.com/gpu' on stock: '$msg'"
	sleep 2
done
figure "stock $STOCK: claim-template pods Running with GPUs $gpus_before; nvidia.com/gpu pod Pending: $msg"

# static_pods NODE: the node's mirror pods with the hash that names their
# static pod, one "name=hash" per line; nothing for a node without static
# pods, or while the API server does not answer.
static_pods() {
	local out
	out=$(kc -n kube-system get pods --field-selector "spec.nodeName=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name}={.metadata.annotations.kubernetes\.io/config\.mirror}{"\n"}{end}' 2>/dev/null) || return 0
	grep -v '=$' <<<"$out" | sort || true
}
# wait_static_pods NODE BEFORE: a kubelet of another build may hash the
# manifests to other static pod UIDs (the hash covers the Pod type, which the
# series extends) and then starts every static pod again, as a kubelet of a
# new minor version does. Wait until every mirror pod carries a new hash and
# the pods are Ready, or 60 s without a change.
wait_static_pods() {
	local n=$1 before=$2 now deadline=$(($(now_s) + 60))
	# Every mirror pod replaced: as many, none with an old hash.
	until now=$(static_pods "$n") && [[ $(grep -c . <<<"$now") == $(grep -c . <<<"$before") ]] &&
		[[ -z $(comm -12 <(echo "$before") <(echo "$now")) ]]; do
		if (($(now_s) >= deadline)); then
			info "static pods of $n kept their UIDs"
			return
		fi
		sleep 2
	done
	figure "kubelet $VERSION on $n started its static pods again (new UIDs: the Pod type has new fields): $(cut -d= -f1 <<<"$now" | tr '\n' ' ')"
	kc -n kube-system wait --for=condition=Ready pod --field-selector "spec.nodeName=$n" --timeout=180s >/dev/null ||
		die "the static pods of $n are not Ready within 180 s after the kubelet's replacement"
	until kc get --raw /readyz >/dev/null 2>&1; do
		(($(now_s) < deadline + 180)) || die "the API server is not ready after the kubelet's replacement on $n"
		sleep 2
	done
}

# 3. Binaries, in the skew order: the control plane, then the kubelets.
upgrade_binaries() {
	local c n
	for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
		"$KIND" load image-archive "$REL/images/$c.tar" --name "$NAME" >/dev/null ||
			die "kind load image-archive of the release's images/$c.tar failed"
	done
	for n in "${nodes[@]}"; do
		docker cp "$REL/bin/kubeadm" "$n:/usr/bin/kubeadm" >/dev/null || die "copying kubeadm to $n failed"
	done
	log "kubeadm upgrade apply $VERSION on $CP"
	docker exec "$CP" kubeadm upgrade apply "$VERSION" --allow-experimental-upgrades --yes >"$KDIR/upgrade-apply.log" 2>&1 ||
		{ tail -20 "$KDIR/upgrade-apply.log" >&2; die "kubeadm upgrade apply $VERSION failed (log: ${KDIR#"$DRAEXT_ROOT"/}/upgrade-apply.log)"; }
	grep -F "SUCCESS" "$KDIR/upgrade-apply.log" >&2 || true
	for n in "${workers[@]}"; do
		docker exec "$n" kubeadm upgrade node >"$KDIR/upgrade-node-$n.log" 2>&1 ||
			{ tail -20 "$KDIR/upgrade-node-$n.log" >&2; die "kubeadm upgrade node on $n failed"; }
	done
	for n in "$CP" "${workers[@]}"; do
		log "kubelet $VERSION on $n"
		local before
		before=$(static_pods "$n")
		docker cp "$REL/bin/kubelet" "$n:/usr/bin/kubelet.new" >/dev/null || die "copying the kubelet to $n failed"
		docker exec "$n" sh -c 'systemctl stop kubelet && mv /usr/bin/kubelet.new /usr/bin/kubelet && systemctl start kubelet' ||
			die "replacing the kubelet of $n failed"
		[[ -z $before ]] || wait_static_pods "$n" "$before"
	done
	local deadline=$(($(now_s) + 120)) versions
	until versions=$(kc get nodes -o jsonpath='{range .items[*]}{.status.nodeInfo.kubeletVersion}{"\n"}{end}' | sort -u) &&
		[[ $versions == "$VERSION" ]] && kc wait --for=condition=Ready node --all --timeout=5s >/dev/null 2>&1; do
		(($(now_s) < deadline)) || die "the nodes do not all report $VERSION and Ready within 120 s: $(tr '\n' ' ' <<<"$versions")"
		sleep 2
	done
}
timed upgrade-binaries upgrade_binaries
server=$(kc version -o json | jq -r .serverVersion.gitVersion)
[[ $server == "$VERSION" ]] || die "after kubeadm upgrade apply the API server is $server"

# 4. The gate, one component at a time.
# cluster_gate COMPONENT POD: the gate on for COMPONENT in ConfigMap
# kubeadm-config, kubeadm upgrade apply renders the changed manifest, and
# the component's pod must then run with it.
cluster_gate() {
	local component=$1 pod=$2-$CP cfg=$KDIR/cluster-configuration.yaml
	log "$GATE on: $2"
	kc -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' |
		"$REL/tools/draext-kubeadm-config" --set-gate "$component:$GATE=true" >"$cfg" || die "setting the gate of $component failed"
	kc -n kube-system create cm kubeadm-config --from-file=ClusterConfiguration="$cfg" --dry-run=client -o yaml |
		kc replace -f - >/dev/null || die "writing ConfigMap kubeadm-config failed"
	docker exec "$CP" kubeadm upgrade apply "$VERSION" --allow-experimental-upgrades --yes >"$KDIR/upgrade-apply-$2.log" 2>&1 ||
		{ tail -20 "$KDIR/upgrade-apply-$2.log" >&2; die "kubeadm upgrade apply for the gate of $2 failed"; }
	local deadline=$(($(now_s) + 120))
	until kc -n kube-system get pod "$pod" -o jsonpath='{.spec.containers[0].command}' 2>/dev/null | grep -q "$GATE=true" &&
		kc -n kube-system wait --for=condition=Ready pod "$pod" --timeout=5s >/dev/null 2>&1; do
		(($(now_s) < deadline)) || die "$pod does not run with $GATE=true within 120 s"
		sleep 2
	done
}
kubelet_gate() {
	local cfg=$KDIR/kubelet-configuration.yaml n
	log "$GATE on: kubelets"
	kc -n kube-system get cm kubelet-config -o jsonpath='{.data.kubelet}' |
		"$REL/tools/draext-kubeadm-config" --set-gate "kubelet:$GATE=true" >"$cfg" || die "setting the kubelets' gate failed"
	kc -n kube-system create cm kubelet-config --from-file=kubelet="$cfg" --dry-run=client -o yaml |
		kc replace -f - >/dev/null || die "writing ConfigMap kubelet-config failed"
	for n in "$CP" "${workers[@]}"; do
		docker exec "$n" sh -c 'kubeadm upgrade node phase kubelet-config && systemctl restart kubelet' >"$KDIR/kubelet-config-$n.log" 2>&1 ||
			{ tail -20 "$KDIR/kubelet-config-$n.log" >&2; die "kubeadm upgrade node phase kubelet-config on $n failed"; }
		docker exec "$n" grep -q "$GATE: true" /var/lib/kubelet/config.yaml || die "the kubelet of $n has no $GATE: true in /var/lib/kubelet/config.yaml"
	done
	kc wait --for=condition=Ready node --all --timeout=120s >/dev/null || die "the nodes are not Ready after the kubelets' restart"
}
gates() {
	cluster_gate apiServer kube-apiserver
	cluster_gate controllerManager kube-controller-manager
	kubelet_gate
	cluster_gate scheduler kube-scheduler
	# The release's DeviceClass, now with extendedResourceName.
	kc apply -k "$REL/overlays/mock" >/dev/null || die "applying the release's overlays/mock failed"
	[[ $(kc get deviceclass gpu.draext.dev -o jsonpath='{.spec.extendedResourceName}') == nvidia.com/gpu ]] ||
		die "the DeviceClass has no extendedResourceName nvidia.com/gpu after the gate is on"
}
timed gate-on gates

# 5. What must hold.
pod extended-new "${workers[1]}" extended | kc apply -f - >/dev/null || die "creating a new nvidia.com/gpu pod failed"
t=$(now_s)
kc -n "$NS" wait --for=condition=Ready pod/extended-stock pod/extended-new --timeout=180s >/dev/null || {
	kc -n "$NS" get pods -o wide >&2
	die "the nvidia.com/gpu pods do not run through DRA after the upgrade"
}
figure "nvidia.com/gpu pods Ready $(($(now_s) - t)) s after the gate was on everywhere (the one Pending since stock and a new one)"
for p in extended-stock extended-new; do
	claim=$(kc -n "$NS" get pod "$p" -o jsonpath='{.status.extendedResourceClaimStatus.resourceClaimName}')
	[[ -n $claim ]] || die "pod $p runs without extendedResourceClaimStatus"
	g=$(gpus "$p")
	[[ -n $g && $g != *,* ]] || die "pod $p has GPUs '$g', want one"
	figure "$p: claim $claim, GPU $g"
done
after=$(containers template-0 template-1)
[[ $after == "$before" ]] || die "the claim-template pods' containers changed across the upgrade" "before: $before" "after:  $after"
gpus_after="$(gpus template-0) $(gpus template-1)"
[[ $gpus_after == "$gpus_before" ]] || die "the claim-template pods' GPUs changed: $gpus_before -> $gpus_after"
figure "claim-template pods: same containers, 0 restarts, same GPUs ($(awk '{print $1, substr($2, 1, 25) "...", "restarts " $3}' <<<"$after" | paste -sd';' -))"
images=$(kc -n kube-system get pods -o jsonpath='{range .items[*]}{.spec.containers[0].image}{"\n"}{end}' | grep -E '/kube-(apiserver|controller-manager|scheduler|proxy)' | sort -u)
! grep -v ":$VERSION\$" <<<"$images" || die "components still run other images than $VERSION"
figure "components: $(tr '\n' ' ' <<<"$images")"

log "make kind-upgrade-test passed ($(($(now_s) - start))s: ${times[*]})"
{
	echo "make kind-upgrade-test $(date -u +%Y-%m-%dT%H:%MZ), $STOCK -> $VERSION ($(($(now_s) - start)) s)"
	echo "steps: ${times[*]}"
	printf '%s\n' "${report[@]}"
} >"$REPORT"
cat "$REPORT"
