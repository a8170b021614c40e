# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up, phase 1: the cluster CA, the service account key, a certificate and
# kubeconfig per component and per node, in PKI. What exists is kept. Sourced
# by scripts/cluster/up.sh; do not run it.

# ossl WHAT ARGS...: openssl ARGS, its chatter kept back; when it fails, one
# ERROR line naming WHAT and openssl's last message.
ossl() {
	local what=$1 out
	shift
	out=$(openssl "$@" 2>&1) ||
		die "openssl: $what failed: $(grep -v '^[[:space:]]*$' <<<"$out" | tail -1)" "certificates: ${PKI#"$DRAEXT_ROOT"/}"
}

# cert NAME SUBJECT [SAN] [EKU]: NAME.crt and NAME.key signed by the cluster CA.
cert() {
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

# kubeconfig FILE CERTNAME: a kubeconfig for the API server with CERTNAME's
# client certificate.
kubeconfig() {
	local f=$1 c=$2
	[[ -f $f ]] && return 0
	cat >"$f" <<KUBECONFIG
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
KUBECONFIG
}

phase_pki() {
	local i ip
	mkdir -p "$PKI"
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
}
