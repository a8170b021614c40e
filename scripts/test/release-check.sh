#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make release-check: proves that the release of make release installs as
# its README says, on this machine:
#   - SHA256SUMS matches;
#   - containerd: a containerd of its own (the local cluster's binaries, its
#     own root, state and socket) imports every image archive with
#     `ctr images import`, lists both tags of each, and runs each component
#     image (--version), kube-proxy's iptables, conntrack and ipset too;
#   - Docker: the engine of make docker-up (Debian's docker.io, started and
#     stopped here when it is not running) loads every archive with `docker
#     load` and runs kube-apiserver from its image;
#   - kubeadm validates config/kubeadm-config.yaml (make release checked it
#     too), and tools/draext-kubeadm-config, statically linked, sets a gate
#     in it that kubeadm still validates.
# SKIP_DOCKER=1 leaves Docker out.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

[[ $(id -u) == 0 ]] || die "make release-check needs root (containerd, Docker)"
VERSION=$(draext_version)
REL=$OUTPUT_DIR/release/$VERSION
ARCH=$(go env GOARCH)
[[ -f $REL/SHA256SUMS ]] || die "no release in ${REL#"$DRAEXT_ROOT"/}" "make release first"
start=$(now_s)

log "SHA256SUMS"
(cd "$REL" && sha256sum --quiet -c SHA256SUMS) || die "the release's files do not match SHA256SUMS"
mapfile -t archives < <(cd "$REL/images" && ls -- *.tar)
((${#archives[@]} == 5)) || die "want 5 image archives in images/, found ${#archives[@]}: ${archives[*]}"

# image_names ARCHIVE: the references an archive carries (index.json).
image_names() { tar -xOf "$REL/images/$1" index.json | jq -r '.manifests[].annotations["io.containerd.image.name"]'; }

# The checks run each image's binary: the component's --version, and for
# kube-proxy the user-space tools it calls.
declare -A run_checks=(
	[kube-apiserver]="/usr/local/bin/kube-apiserver --version"
	[kube-controller-manager]="/usr/local/bin/kube-controller-manager --version"
	[kube-scheduler]="/usr/local/bin/kube-scheduler --version"
	[kube-proxy]="/usr/local/bin/kube-proxy --version"
)
proxy_tools="iptables --version && iptables-save --version && conntrack --version && command -v ipset"

log "containerd: ctr images import, and a container of each component"
[[ -x $CBIN/containerd && -x $CBIN/ctr ]] || bash "$DRAEXT_ROOT/scripts/cluster/deps.sh" >/dev/null
need_tool runc "make cluster-deps installs it"
cdir=$(mktemp -d /tmp/draext-release-check.XXXXXX)
sock=$cdir/containerd.sock
cat >"$cdir/config.toml" <<TOML
version = 2
root = "$cdir/root"
state = "$cdir/state"
[grpc]
  address = "$sock"
TOML
env PATH="$CBIN:$PATH" "$CBIN/containerd" --config "$cdir/config.toml" >"$cdir/containerd.log" 2>&1 &
cpid=$!
cleanup() {
	kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
	umount -R "$cdir/root" "$cdir/state" 2>/dev/null || true
	rm -rf "$cdir"
}
trap cleanup EXIT
ctr_() { "$CBIN/ctr" -a "$sock" -n draext-release "$@"; }
for _ in $(seq 1 50); do ctr_ version >/dev/null 2>&1 && break; sleep 0.2; done
ctr_ version >/dev/null || die "the check's containerd did not start (log: $cdir/containerd.log)"
# The image list is read whole before grep looks at it: grep -q stops at
# the first match, and ctr, killed by SIGPIPE, would fail the pipeline.
for a in "${archives[@]}"; do
	ctr_ images import "$REL/images/$a" >/dev/null || die "ctr images import images/$a failed"
	images=$(ctr_ images ls -q)
	while IFS= read -r name; do
		grep -qxF "$name" <<<"$images" || die "images/$a: $name is not in containerd after the import"
	done < <(image_names "$a")
done
images=$(ctr_ images ls -q)
for c in "${!run_checks[@]}"; do
	for name in "registry.k8s.io/$c:$VERSION" "registry.k8s.io/$c-$ARCH:$VERSION"; do
		grep -qxF "$name" <<<"$images" || die "containerd has no $name"
	done
	# shellcheck disable=SC2086 # the check is a command line
	out=$(env PATH="$CBIN:$PATH" "$CBIN/ctr" -a "$sock" -n draext-release run --rm "registry.k8s.io/$c:$VERSION" "check-$c" ${run_checks[$c]} 2>&1) ||
		die "running registry.k8s.io/$c:$VERSION failed: $out"
	[[ $out == "Kubernetes $VERSION" ]] || die "registry.k8s.io/$c:$VERSION says $out, want Kubernetes $VERSION"
	info "$c: $out"
done
out=$(env PATH="$CBIN:$PATH" "$CBIN/ctr" -a "$sock" -n draext-release run --rm "registry.k8s.io/kube-proxy:$VERSION" check-proxy-tools sh -c "$proxy_tools" 2>&1) ||
	die "kube-proxy's image lacks a tool it calls: $out"
info "kube-proxy's tools: $(tr '\n' ';' <<<"$out")"
out=$(env PATH="$CBIN:$PATH" "$CBIN/ctr" -a "$sock" -n draext-release run --rm "localhost/draext/draext-gpu:$VERSION" check-driver /usr/bin/draext-gpu --help 2>&1 || true)
grep -q -- '-mode ' <<<"$out" || die "the driver image does not run draext-gpu: $out"
info "draext-gpu runs from localhost/draext/draext-gpu:$VERSION"
cleanup
trap - EXIT

if [[ ${SKIP_DOCKER:-0} != 1 ]]; then
	log "Docker (make docker-up's engine): docker load, and kube-apiserver from its image"
	stop_docker=
	if [[ -z $(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env) ]]; then
		bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" up
		stop_docker=1
		trap 'bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" down' EXIT
	fi
	DOCKER_HOST=$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env)
	export DOCKER_HOST
	for a in "${archives[@]}"; do
		loaded=$(docker load -i "$REL/images/$a" 2>&1) || die "docker load -i images/$a failed: $loaded"
		while IFS= read -r name; do
			docker image inspect "$name" >/dev/null 2>&1 || die "images/$a: docker has no $name after docker load ($loaded)"
		done < <(image_names "$a")
	done
	out=$(docker run --rm --network none "registry.k8s.io/kube-apiserver-$ARCH:$VERSION" --version 2>&1) ||
		die "docker run of kube-apiserver failed: $out"
	[[ $out == "Kubernetes $VERSION" ]] || die "kube-apiserver in Docker says $out"
	info "docker: $(docker version -f '{{.Server.Version}}'), every archive loaded with both tags; kube-apiserver: $out"
	for a in "${archives[@]}"; do
		image_names "$a" | xargs docker rmi >/dev/null 2>&1 || true
	done
	if [[ -n $stop_docker ]]; then
		bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" down
		trap - EXIT
	fi
fi

"$REL/bin/kubeadm" config validate --config "$REL/config/kubeadm-config.yaml" >/dev/null ||
	die "kubeadm rejects config/kubeadm-config.yaml"
# ldd fails on a static binary; what it says is what counts.
linkage=$(LC_ALL=C ldd "$REL/tools/draext-kubeadm-config" 2>&1 || true)
grep -q "not a dynamic executable" <<<"$linkage" ||
	die "tools/draext-kubeadm-config is not statically linked: $(head -3 <<<"$linkage")"
# The runbook's step: one component's gate changed in a ClusterConfiguration.
tmp=$(mktemp -d)
awk '/^---/{n++; next} n==0' "$REL/config/kubeadm-config.yaml" |
	"$REL/tools/draext-kubeadm-config" --set-gate scheduler:DRAExtendedResource=false >"$tmp/cluster.yaml" ||
	die "tools/draext-kubeadm-config --set-gate failed on config/kubeadm-config.yaml"
"$REL/bin/kubeadm" config validate --config "$tmp/cluster.yaml" >/dev/null ||
	die "kubeadm rejects the ClusterConfiguration draext-kubeadm-config --set-gate wrote" "$(cat "$tmp/cluster.yaml")"
grep -q 'DRAExtendedResource=false' "$tmp/cluster.yaml" || die "draext-kubeadm-config --set-gate did not change the scheduler's gate"
rm -rf "$tmp"
info "tools/draext-kubeadm-config: static, --set-gate output validated by kubeadm"
log "release-check: ${REL#"$DRAEXT_ROOT"/} installs as its README says ($(($(now_s) - start))s)"
