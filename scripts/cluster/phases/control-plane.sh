# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up, phase 2: etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler as host processes on 127.0.0.1, each with its readiness
# check; nodes of an earlier, larger cluster are removed. Sourced by
# scripts/cluster/up.sh; do not run it.

phase_control_plane() {
	local node keep i admin_curl
	launch etcd --ready curl -sf http://127.0.0.1:2381/health -- \
		"$TOOLS_DIR/etcd/etcd" --name draext --data-dir "$STATE_DIR/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster draext=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
	proc_wait etcd 60 "${STARTED[@]}"
	phase "etcd healthy"

	admin_curl=(curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")
	launch kube-apiserver --ready "${admin_curl[@]}" https://127.0.0.1:6443/readyz -- \
		"$KBIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
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
		--feature-gates="$FEATURE_GATES" --runtime-config="$RUNTIME_CONFIG"
	proc_wait kube-apiserver 120 "${STARTED[@]}"
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

	launch kube-controller-manager --ready curl -skf https://127.0.0.1:10257/healthz -- \
		"$KBIN/kube-controller-manager" --kubeconfig="$PKI/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
		--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
		--authentication-kubeconfig="$PKI/controller-manager.kubeconfig" --authorization-kubeconfig="$PKI/controller-manager.kubeconfig" \
		--feature-gates="$FEATURE_GATES"
	launch kube-scheduler --ready curl -skf https://127.0.0.1:10259/healthz -- \
		"$KBIN/kube-scheduler" --kubeconfig="$PKI/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false \
		--authentication-kubeconfig="$PKI/scheduler.kubeconfig" --authorization-kubeconfig="$PKI/scheduler.kubeconfig" \
		--feature-gates="$FEATURE_GATES"
	proc_wait kube-controller-manager 60 "${STARTED[@]}"
	proc_wait kube-scheduler 60 "${STARTED[@]}"
	phase "kube-controller-manager and kube-scheduler healthy"
}
