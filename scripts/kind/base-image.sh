#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds a kind base image without any registry: a Debian (DEBIAN_SUITE) root file
# system from debootstrap (Debian's mirror, DEBIAN_MIRROR= to change), kind's own base
# files taken from the pinned kind module (sigs.k8s.io/kind, fetched from the
# Go module proxy, never committed), the pinned containerd and crictl from
# make cluster-deps, and containerd's restrict_oom_score_adj on (pod
# sandboxes cannot lower oom_score_adj without CAP_SYS_RESOURCE). Online,
# users do not need this: kind's own kindest/base is the default there.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/images.sh"

KDIR=$OUTPUT_DIR/kind
ROOTFS=$KDIR/base-rootfs
eval "$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env | sed 's/^/export DOCKER_HOST=/')"
docker info >/dev/null 2>&1 || die "no Docker engine: make docker-up (make node-image starts one itself)"

# What the image is made of: this script, kind/, and the pinned versions it
# uses (scripts/lib/config.sh, or their overrides from the environment).
inputs=$({
	cat "$0" "$DRAEXT_ROOT/kind/"*
	echo "$KIND_VERSION $CONTAINERD_VERSION $CRICTL_VERSION $DEBIAN_SUITE"
} | sha256sum | cut -c1-12)
if [[ $(docker image inspect -f '{{index .Config.Labels "draext.inputs"}}' "$BASE_IMAGE" 2>/dev/null) == "$inputs" ]]; then
	info "$BASE_IMAGE is up to date"
	exit 0
fi
bash "$DRAEXT_ROOT/scripts/cluster/deps.sh" >/dev/null
kind_src=$(module_dir sigs.k8s.io/kind "$KIND_VERSION")
[[ -d $kind_src/images/base/files ]] || die "sigs.k8s.io/kind@$KIND_VERSION has no images/base/files (in $kind_src)"
mirror=$DEBIAN_MIRROR

start=$(now_s)
mkdir -p "$KDIR"
rm -rf "$ROOTFS"
log "debootstrap $DEBIAN_SUITE from $mirror"
debootstrap --variant=minbase \
	--include=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,curl,jq,procps,runc,containernetworking-plugins,iputils-ping \
	"$DEBIAN_SUITE" "$ROOTFS" "$mirror" >"$KDIR/debootstrap.log" 2>&1 || { tail -5 "$KDIR/debootstrap.log" >&2; die "debootstrap failed"; }
info "debootstrap done ($(($(now_s) - start))s)"

files=$kind_src/images/base/files
install -m 0755 "$files"/usr/local/bin/* "$ROOTFS/usr/local/bin/"
mkdir -p "$ROOTFS/kind/bin" "$ROOTFS/etc/kubernetes/manifests" "$ROOTFS/opt/cni/bin"
cp -r "$files/kind/." "$ROOTFS/kind/"
chmod 0755 "$ROOTFS"/kind/bin/*
cp -r "$files/etc/." "$ROOTFS/etc/"
# containerd inside the node cannot lower oom_score_adj either.
sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$ROOTFS/etc/containerd/config.toml"
grep -q 'restrict_oom_score_adj = true' "$ROOTFS/etc/containerd/config.toml" ||
	die "kind $KIND_VERSION's containerd config has no restrict_oom_score_adj to set"
install -m 0755 "$OUTPUT_DIR/cluster/bin/"{containerd,containerd-shim-runc-v2,ctr,crictl} "$ROOTFS/usr/local/bin/"
for p in host-local loopback ptp portmap bridge; do ln -sf "/usr/lib/cni/$p" "$ROOTFS/opt/cni/bin/$p"; done

chroot "$ROOTFS" /bin/bash -euc '
	find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
	rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
		/lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
		/lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
	echo ReadKMsg=no >>/etc/systemd/journald.conf
	ln -sf "$(command -v systemd || echo /lib/systemd/systemd)" /sbin/init
	systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
	systemctl mask systemd-binfmt.service >/dev/null 2>&1
	ctr oci spec | jq ".hooks.createContainer[.hooks.createContainer | length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}" |
		jq "del(.process.rlimits)" >/etc/containerd/cri-base.json
	apt-get clean
	rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old
' || die "setting up systemd and containerd in the base root file system failed (chroot, see above)"

log "importing $BASE_IMAGE"
tar -C "$ROOTFS" -c . | docker import - "$BASE_IMAGE-rootfs" >/dev/null || die "docker import failed"
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $BASE_IMAGE-rootfs
ENV container=docker
LABEL draext.inputs=$inputs
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
DOCKERFILE
docker_build "$KDIR/docker-build-base.log" "$BASE_IMAGE" "$ctx"
docker rmi "$BASE_IMAGE-rootfs" >/dev/null 2>&1 || true
rm -rf "$ROOTFS"
log "$BASE_IMAGE built ($(($(now_s) - start))s, $(docker image inspect -f '{{.Size}}' "$BASE_IMAGE" | awk '{printf "%d MB", $1/1e6}'))"
