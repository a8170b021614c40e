#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Starts a local Kubernetes cluster of the patched binaries on this host,
# without Docker: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, and per node a containerd (CDI on) and a kubelet, all on
# 127.0.0.x. Then the example GPU driver runs per node as a host process with
# mock GPUs: DRA on node 1 (and every node but the last), the classic device
# plugin (nvidia.com/gpu) on the last node when NODES >= 2.
#
# NODES=N (default 1) picks the node count. DRIVER=daemonset (with NODES=1)
# deploys the driver as a DaemonSet from overlays/local instead, to prove the
# image, RBAC and manifests. A second run on a running
# cluster does nothing; a component that died is reported with its log and
# started again. FEATURE_GATES replaces the default gates (e.g. for an
# unpatched build) of every component; KUBELET_FEATURE_GATES (default
# KubeletPodResourcesDynamicResources=true, the alpha gate that makes the
# PodResources API report DRA devices, which the e2e suite reads with
# cmd/draext-podresources) go to the kubelets only, after FEATURE_GATES (the
# later value of a gate wins); KBIN points at other Kubernetes binaries.
source "$(dirname "${BASH_SOURCE[0]}")/cluster-lib.sh"

NODES=${NODES:-1}
[[ $NODES =~ ^[1-9]$ ]] || die "NODES=$NODES: use 1 to 9"
DRIVER=${DRIVER:-host}
case $DRIVER in
host) ;;
daemonset) [[ $NODES == 1 ]] || die "DRIVER=daemonset needs NODES=1: overlays/local uses node 1's kubelet directories" ;;
*) die "DRIVER=$DRIVER: use host (default) or daemonset" ;;
esac
FEATURE_GATES=${FEATURE_GATES:-DynamicResourceAllocation=true,DRAExtendedResource=true,DRADeviceTaints=true}
KUBELET_FEATURE_GATES=${KUBELET_FEATURE_GATES:-KubeletPodResourcesDynamicResources=true}
MOCK_PROFILE=${MOCK_PROFILE:-dgxa100}
# The drivers' health services listen on 127.0.0.1:<base + node>. The base is
# below the kernel's ephemeral port range (32768-60999 here): a port in it can
# be taken at any moment as the source port of some outgoing connection, and a
# driver's health service then fails with "address already in use".
HEALTH_PORT_BASE=${HEALTH_PORT_BASE:-19515}
KBIN=${KBIN:-$BIN_DIR}
BIN_DIR=$KBIN
[[ $(id -u) == 0 ]] || die "the local cluster needs root (containerd, kubelet, cgroups, mounts)"

T0=$(date +%s.%N)
phase() { printf '==> [%5.1fs] %s\n' "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{print a-b}')" "$*" >&2; }

if [[ -f $PIDS/nodes && $(cat "$PIDS/nodes") != "$NODES" ]] && alive etcd; then
	die "a cluster with $(cat "$PIDS/nodes") node(s) is running" "run make down first, or NODES=$(cat "$PIDS/nodes")"
fi

# Binaries: (re)build what is missing or stale (incremental: under a second
# per binary when nothing changed). Binaries from KBIN= are used as they are.
if [[ $KBIN == "$OUTPUT_DIR/bin" ]]; then
	WHAT="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl" bash "$DRAEXT_ROOT/scripts/build.sh"
else
	for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		[[ -x $KBIN/$b ]] || die "missing in KBIN=$KBIN: $b"
	done
fi
bash "$DRAEXT_ROOT/scripts/cluster-deps.sh"
ETCD=$TOOLS_DIR/etcd/etcd
mkdir -p "$PKI" "$LOGS" "$PIDS" "$STATE_DIR" "$RUN_DIR"
echo "$NODES" >"$PIDS/nodes"
echo "$DRIVER" >"$PIDS/driver"
# The kubelet creates the (hard-coded) device-plugin directory under
# /var/lib/kubelet; remember whether that was us, for make down PURGE=1.
[[ -e /var/lib/kubelet || -f $PIDS/created-var-lib-kubelet ]] || touch "$PIDS/created-var-lib-kubelet"

# start NAME EXE ARGS...: run in its own session with a pid file, unless it
# already runs. A pid file whose process is gone means it crashed: say so.
start() {
	local name=$1 exe=$2
	shift 2
	if alive "$name"; then
		info "$name is running (pid $(pid_of "$name"))"
		return 0
	fi
	if [[ -f $PIDS/$name.pid ]]; then
		warn "$name (pid $(pid_of "$name")) is not running any more; last lines of its log:"
		log_tail "$name"
	fi
	[[ -f $LOGS/$name.log ]] && mv "$LOGS/$name.log" "$LOGS/$name.log.prev"
	setsid "$exe" "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
	echo "$! $exe" >"$PIDS/$name.pid"
	STARTED+=("$name")
}
STARTED=()

# wait_for WHAT SECONDS COMMAND...: poll until COMMAND succeeds; a component
# that dies meanwhile stops the wait with its log.
wait_for() {
	local what=$1 timeout=$2
	shift 2
	local deadline=$(($(date +%s) + timeout)) n
	until "$@" >/dev/null 2>&1; do
		for n in "${STARTED[@]}"; do
			alive "$n" || { log_tail "$n" 30; die "$n exited while waiting for $what (log: ${LOGS#"$DRAEXT_ROOT"/}/$n.log)"; }
		done
		(($(date +%s) < deadline)) || die "timed out after ${timeout}s waiting for $what"
		sleep 0.2
	done
}

# --- certificates ---------------------------------------------------------
# ossl WHAT ARGS...: openssl ARGS, its chatter kept back; when it fails, one
# ERROR line naming WHAT and openssl's last message.
ossl() {
	local what=$1 out
	shift
	out=$(openssl "$@" 2>&1) ||
		die "openssl: $what failed: $(grep -v '^[[:space:]]*$' <<<"$out" | tail -1)" "certificates: ${PKI#"$DRAEXT_ROOT"/}"
}
cert() { # NAME SUBJECT [SAN] [EKU]
	local name=$1 subj=$2 san=${3:-} eku=${4:-clientAuth}
	[[ -f $PKI/$name.crt ]] && return 0
	ossl "creating the key and request of $name" req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[[ -z $san ]] || echo "subjectAltName=$san"
	} >"$PKI/$name.ext"
	ossl "signing the certificate of $name" x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 365 -extfile "$PKI/$name.ext" -out "$PKI/$name.crt"
	rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
kubeconfig() { # FILE CERTNAME
	local f=$1 c=$2
	[[ -f $f ]] && return 0
	cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: draext
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: $PKI/ca.crt
users:
- name: $c
  user:
    client-certificate: $PKI/$c.crt
    client-key: $PKI/$c.key
contexts:
- name: draext
  context: {cluster: draext, user: $c}
current-context: draext
EOF
}
if [[ ! -f $PKI/ca.crt ]]; then
	ossl "creating the cluster CA" req -x509 -new -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -subj "/CN=draext-local-ca" \
		-days 365 -out "$PKI/ca.crt"
fi
if [[ ! -f $PKI/sa.key ]]; then
	ossl "creating the service account key" genrsa -out "$PKI/sa.key.new" 2048
	mv "$PKI/sa.key.new" "$PKI/sa.key"
fi
[[ -f $PKI/sa.pub ]] || ossl "writing the service account public key" rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
cert apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:127.200.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc" serverAuth
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
cert admin "/O=system:masters/CN=draext-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert draext-gpu "/CN=draext-gpu-driver"
cert front-proxy-client "/CN=front-proxy-client"
kubeconfig "$KUBECONFIG_FILE" admin
kubeconfig "$PKI/controller-manager.kubeconfig" controller-manager
kubeconfig "$PKI/scheduler.kubeconfig" scheduler
kubeconfig "$PKI/draext-gpu.kubeconfig" draext-gpu
for i in $(seq 1 "$NODES"); do
	ip=$(node_ip "$i")
	cert "kubelet$i" "/O=system:nodes/CN=system:node:$ip"
	cert "kubelet$i-serving" "/O=system:nodes/CN=system:node:$ip" "IP:$ip" serverAuth
	kubeconfig "$PKI/kubelet$i.kubeconfig" "kubelet$i"
done
phase "certificates in ${PKI#"$DRAEXT_ROOT"/}"

# --- control plane --------------------------------------------------------
start etcd "$ETCD" --name draext --data-dir "$STATE_DIR/etcd" \
	--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster draext=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
wait_for "etcd" 60 curl -sf http://127.0.0.1:2381/health
phase "etcd healthy"

start kube-apiserver "$KBIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
	--bind-address=127.0.0.1 --secure-port=6443 --advertise-address=127.0.0.1 --endpoint-reconciler-type=none \
	--service-cluster-ip-range=127.200.0.0/16 --allow-privileged=true \
	--client-ca-file="$PKI/ca.crt" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
	--kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
	--service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$PKI/sa.pub" \
	--service-account-signing-key-file="$PKI/sa.key" \
	--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
	--requestheader-client-ca-file="$PKI/ca.crt" --requestheader-allowed-names=front-proxy-client \
	--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
	--requestheader-extra-headers-prefix=X-Remote-Extra- \
	--proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
	--feature-gates="$FEATURE_GATES" --runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true,resource.k8s.io/v1alpha3=true
wait_for "kube-apiserver /readyz" 120 curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" https://127.0.0.1:6443/readyz
phase "kube-apiserver ready"

# Nodes of an earlier, larger cluster (make up NODES=2, then make up) are
# still in etcd and look Ready until the node lifecycle controller notices:
# the scheduler would bind pods to them. Remove them, and their slices.
for node in $(kubectl_ get nodes -o jsonpath='{.items[*].metadata.name}'); do
	keep=
	for i in $(seq 1 "$NODES"); do [[ $node == "$(node_ip "$i")" ]] && keep=1; done
	[[ -n $keep ]] && continue
	kubectl_ delete node "$node" --wait=false >/dev/null || die "deleting node $node of an earlier cluster failed"
	kubectl_ delete resourceslices --field-selector "spec.nodeName=$node" >/dev/null 2>&1 || true
	info "removed node $node of an earlier cluster with more nodes"
done

start kube-controller-manager "$KBIN/kube-controller-manager" --kubeconfig="$PKI/controller-manager.kubeconfig" \
	--bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
	--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
	--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
	--authentication-kubeconfig="$PKI/controller-manager.kubeconfig" --authorization-kubeconfig="$PKI/controller-manager.kubeconfig" \
	--feature-gates="$FEATURE_GATES"
start kube-scheduler "$KBIN/kube-scheduler" --kubeconfig="$PKI/scheduler.kubeconfig" \
	--bind-address=127.0.0.1 --leader-elect=false \
	--authentication-kubeconfig="$PKI/scheduler.kubeconfig" --authorization-kubeconfig="$PKI/scheduler.kubeconfig" \
	--feature-gates="$FEATURE_GATES"
wait_for "kube-controller-manager /healthz" 60 curl -skf https://127.0.0.1:10257/healthz
wait_for "kube-scheduler /healthz" 60 curl -skf https://127.0.0.1:10259/healthz
phase "kube-controller-manager and kube-scheduler healthy"

# --- nodes ----------------------------------------------------------------
# The kubelets get FEATURE_GATES and KUBELET_FEATURE_GATES, each gate once
# (the kubelet refuses a config with a duplicate key), the last value winning.
gates_yaml=$(tr ',' '\n' <<<"$FEATURE_GATES,$KUBELET_FEATURE_GATES" | awk -F= '
	NF == 0 { next }
	NF != 2 || $1 == "" { printf "invalid feature gate \"%s\": use Name=true|false\n", $0 >"/dev/stderr"; exit 1 }
	!($1 in v) { order[++n] = $1 }
	{ v[$1] = $2 }
	END { for (i = 1; i <= n; i++) printf "  %s: %s\n", order[i], v[order[i]] }') ||
	die "FEATURE_GATES=$FEATURE_GATES KUBELET_FEATURE_GATES=$KUBELET_FEATURE_GATES: a gate is not Name=value"
for i in $(seq 1 "$NODES"); do
	ip=$(node_ip "$i") nd=$(node_dir "$i") nr=$(node_run "$i") cg=$(node_cgroup "$i")
	mkdir -p "$nd/containerd" "$nd/cdi" "$nd/cni-conf" "$nd/kubelet" "$nd/pod-logs" "$nd/static-pods" "$nd/driver" "$nr"
	# The kubelet requires its cgroup root to exist in every controller.
	for c in $(cgroup_controllers); do
		mkdir -p "$c$cg"
		if [[ $(basename "$c") == cpuset ]]; then
			cat "$c/cpuset.cpus" >"$c$cg/cpuset.cpus"
			cat "$c/cpuset.mems" >"$c$cg/cpuset.mems"
		fi
	done
	cat >"$nd/containerd.toml" <<EOF
version = 3
root = '$nd/containerd'
state = '$nr/containerd'
[grpc]
  address = '$nr/containerd.sock'
[ttrpc]
  address = '$nr/containerd.sock.ttrpc'
[plugins.'io.containerd.nri.v1.nri']
  socket_path = '$nr/nri.sock'
[plugins.'io.containerd.cri.v1.images']
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = 'localhost/draext/pause:$PAUSE_TAG'
[plugins.'io.containerd.cri.v1.runtime']
  enable_cdi = true
  cdi_spec_dirs = ['$nd/cdi']
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = 'io.containerd.runc.v2'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = '$(command -v runc)'
      Root = '$nr/runc'
      SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$CBIN/cni']
    conf_dir = '$nd/cni-conf'
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'
  stream_server_port = '0'
EOF
	cat >"$nd/cni-conf/10-draext.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "draext-node$i",
  "plugins": [
    {"type": "bridge", "bridge": "draext$i", "isGateway": false, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "127.$((99 + i)).0.0/16"}]], "dataDir": "$nd/cni-ipam"}},
    {"type": "loopback"}
  ]
}
EOF
	PATH=$CBIN:$PATH start "containerd$i" "$CBIN/containerd" --config "$nd/containerd.toml"
	wait_for "containerd on node $i" 60 "$CBIN/ctr" -a "$nr/containerd.sock" version
	for img in "$CLUSTER_DIR"/images/*.tar; do
		"$CBIN/ctr" -a "$nr/containerd.sock" -n k8s.io images import --no-unpack=false "$img" >/dev/null ||
			die "importing $(basename "$img") into containerd on node $i failed"
	done
	port=$((10250 + 100 * (i - 1)))
	cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $port
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: $((port - 2))
tlsCertFile: $PKI/kubelet$i-serving.crt
tlsPrivateKeyFile: $PKI/kubelet$i-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: $cg
cgroupsPerQOS: true
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$nr/containerd.sock
staticPodPath: $nd/static-pods
podLogsDir: $nd/pod-logs
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
featureGates:
$gates_yaml
EOF
	start "kubelet$i" "$KBIN/kubelet" --config="$nd/kubelet.yaml" --kubeconfig="$PKI/kubelet$i.kubeconfig" \
		--hostname-override="$ip" --root-dir="$nd/kubelet" --cert-dir="$PKI" --v=2
	wait_for "node $ip Ready" 120 sh -c "'$KBIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get node '$ip' -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
	phase "node $ip Ready"
done
wait_for "default ServiceAccount" 60 kubectl_ get serviceaccount default

# --- the example driver ---------------------------------------------------
kubectl_ apply -f "$DRAEXT_ROOT/overlays/base/clusterrole.yaml" -f "$DRAEXT_ROOT/overlays/base/deviceclass.yaml" >/dev/null ||
	die "applying the driver's ClusterRole and DeviceClass failed"
kubectl_ create clusterrolebinding draext-gpu-host --clusterrole=draext-gpu --user=draext-gpu-driver \
	--dry-run=client -o yaml | kubectl_ apply -f - >/dev/null ||
	die "applying the ClusterRoleBinding draext-gpu-host failed"
if [[ $DRIVER == daemonset ]]; then
	kubectl_ apply -k "$DRAEXT_ROOT/overlays/local" >/dev/null || die "applying overlays/local failed"
	phase "driver DaemonSet applied (overlays/local)"
else
	for i in $(seq 1 "$NODES"); do
		ip=$(node_ip "$i") nd=$(node_dir "$i")
		mode=$(node_mode "$i")
		# -v=2 adds the checkpoint and health details to the per-claim lines.
		args=(--mode="$mode" --nvml="mock:$MOCK_PROFILE" --node-name="$ip" --state-dir="$nd/driver" -v=2)
		if [[ $mode == dra ]]; then
			args+=(--kubeconfig="$PKI/draext-gpu.kubeconfig" --cdi-root="$nd/cdi"
				--kubelet-plugins-dir="$nd/kubelet/plugins" --kubelet-registrar-dir="$nd/kubelet/plugins_registry"
				--healthcheck-address="127.0.0.1:$((HEALTH_PORT_BASE + i))")
		else
			args+=(--device-plugin-dir="$DEVICE_PLUGIN_DIR")
		fi
		start "draext-gpu$i" "$CBIN/draext-gpu" "${args[@]}"
	done
fi
for i in $(seq 1 "$NODES"); do
	ip=$(node_ip "$i")
	if [[ $(node_mode "$i") == dra ]]; then
		wait_for "ResourceSlice of node $ip" 60 sh -c "'$KBIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get resourceslices -o jsonpath='{.items[?(@.spec.nodeName==\"$ip\")].spec.driver}' | grep -q gpu.draext.dev"
		phase "node $ip: DRA driver published its GPUs"
	else
		wait_for "nvidia.com/gpu on node $ip" 60 sh -c "'$KBIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get node '$ip' -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}' | grep -q '[1-9]'"
		phase "node $ip: device plugin advertises nvidia.com/gpu"
	fi
done

phase "cluster up: $NODES node(s), feature gates $FEATURE_GATES, kubelets also $KUBELET_FEATURE_GATES"
cat >&2 <<EOF
    export KUBECONFIG=${KUBECONFIG_FILE}
    kubectl get nodes; kubectl get resourceslices; make demo; make e2e; make down
    logs: ${LOGS#"$DRAEXT_ROOT"/}/
EOF
