#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Installs or builds everything the local cluster needs besides the patched
# Kubernetes binaries, into _output/cluster: runc and busybox-static (Debian
# apt), containerd v2 with CDI (Debian's 1.6 has none), crictl, the CNI
# plugins, etcd, the example driver, and the OCI images pause, busybox and
# draext-gpu (built locally: no registry is reachable). Each piece is skipped
# when it is already there at the pinned version.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/images.sh"

CLUSTER_DIR=$OUTPUT_DIR/cluster
CBIN=$CLUSTER_DIR/bin
IMAGES=$CLUSTER_DIR/images
mkdir -p "$CBIN/cni" "$IMAGES"
need_base_tools
export GOWORK=off GOFLAGS=-mod=mod
start=$(now_s)

# stamp NAME VERSION: true when NAME was built at VERSION.
stamp() { [[ -f $CLUSTER_DIR/.$1.stamp && $(cat "$CLUSTER_DIR/.$1.stamp") == "$2" ]]; }
set_stamp() { echo "$2" >"$CLUSTER_DIR/.$1.stamp"; }

missing=()
command -v runc >/dev/null || missing+=(runc)
[[ -x /bin/busybox ]] || missing+=(busybox-static)
command -v jq >/dev/null || missing+=(jq)
command -v openssl >/dev/null || missing+=(openssl)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v iptables >/dev/null || missing+=(iptables)
if ((${#missing[@]})); then
	log "installing Debian packages: ${missing[*]}"
	[[ $(id -u) == 0 ]] || die "installing ${missing[*]} needs root"
	apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

bash "$DRAEXT_ROOT/scripts/build/install-etcd.sh"

if ! stamp containerd "$CONTAINERD_VERSION"; then
	log "building containerd $CONTAINERD_VERSION (CDI support) from the Go module proxy"
	t0=$(now_s)
	src=$(module_dir github.com/containerd/containerd/v2 "$CONTAINERD_VERSION")
	# `go install` is refused (exclude directives): build inside the module.
	(cd "$src" && CGO_ENABLED=1 go build -trimpath -tags no_btrfs \
		-ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
		-o "$CBIN/" ./cmd/containerd ./cmd/containerd-shim-runc-v2 ./cmd/ctr) ||
		die "building containerd failed (see above)"
	set_stamp containerd "$CONTAINERD_VERSION"
	info "containerd built in $(($(now_s) - t0))s"
fi

if ! stamp crictl "$CRICTL_VERSION"; then
	log "building crictl $CRICTL_VERSION"
	GOBIN=$CBIN CGO_ENABLED=0 go install "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION" || die "building crictl failed"
	set_stamp crictl "$CRICTL_VERSION"
fi

if ! stamp cni "$CNI_VERSION"; then
	log "building CNI plugins $CNI_VERSION (bridge, host-local, loopback)"
	for p in main/bridge ipam/host-local main/loopback; do
		GOBIN=$CBIN/cni CGO_ENABLED=0 go install "github.com/containernetworking/plugins/plugins/$p@$CNI_VERSION" ||
			die "building CNI plugin $p failed"
	done
	set_stamp cni "$CNI_VERSION"
fi

# Our own binaries (the example driver, the image packer) and the driver image.
bash "$DRAEXT_ROOT/scripts/build/driver-image.sh"

# Images. pause comes from the pinned tree's own source; busybox from Debian.
image() { # NAME TAG ROOT ENTRYPOINT...
	local name=$1 tag=$2 root=$3
	shift 3
	local args=()
	for e in "$@"; do args+=(--entrypoint "$e"); done
	"$CBIN/draext-image" --name "localhost/draext/$name:$tag" --root "$root" --env PATH=/bin:/usr/bin "${args[@]}" \
		--output "$IMAGES/$name.tar" || die "packing image $name failed"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# pause is built from the upstream tree's source.
[[ -f $KUBE_TREE/build/pause/linux/pause.c ]] || bash "$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
build_pause "$work/pause" "$PAUSE_TAG"
image pause "$PAUSE_TAG" "$work/pause" /pause

busybox_root "$work/busybox" sh env cat ls sleep echo grep
mkdir -p "$work/busybox/etc" "$work/busybox/tmp"
echo 'root:x:0:0:root:/:/bin/sh' >"$work/busybox/etc/passwd"
image busybox "$BUSYBOX_TAG" "$work/busybox" /bin/sh

log "cluster dependencies ready in ${CLUSTER_DIR#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s)"
