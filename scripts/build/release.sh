#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make release: what a user takes to an existing cluster, without Docker,
# into _output/release/v1.33.13-draext.<N>/:
#
#   bin/         kube-apiserver kube-controller-manager kube-scheduler kube-proxy
#                kubelet kubectl kubeadm (linux/<arch>)
#   images/      OCI image archives, also loadable with docker load: the four
#                control-plane and proxy images tagged registry.k8s.io/<c>:<version>
#                and registry.k8s.io/<c>-<arch>:<version> (kind's name), kube-proxy on
#                Debian with iptables, conntrack and ipset; the example driver
#                localhost/draext/draext-gpu:<version>
#   overlays/    the example driver's kustomize overlays, at the released image
#   config/      kubeadm-config.yaml and containerd-cdi.toml, derived from
#                kind-configs/multi-node-offline.yaml (cmd/draext-kubeadm-config)
#   tools/       draext-kubeadm-config, which sets one component's gate in the
#                kubeadm-config and kubelet-config ConfigMaps (upgrade runbook)
#   README.md    what each file is and how to install it
#   SHA256SUMS   of every file above
#
# The binaries are built incrementally (make build); the kube-proxy base is
# debootstrapped once (Debian's mirror, DEBIAN_MIRROR=) and kept in
# _output/release/cache. kubeadm itself checks the configuration and that
# the image names are the ones it pulls for the version.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

need_base_tools
[[ $(id -u) == 0 ]] || die "make release needs root (debootstrap of kube-proxy's base, file ownership in the images)"
ARCH=$(go env GOARCH)
VERSION=$(draext_version)
RDIR=$OUTPUT_DIR/release
OUT=$RDIR/$VERSION
KIND_SOURCE=kind-configs/multi-node-offline.yaml
COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
start=$(now_s)

log "release $VERSION into ${OUT#"$DRAEXT_ROOT"/}"
WHAT="${COMPONENTS[*]} kubelet kubectl kubeadm" bash "$DRAEXT_ROOT/scripts/build/build.sh"
tools=$RDIR/tools
mkdir -p "$tools"
(cd "$DRAEXT_ROOT" && GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$tools/" ./cmd/draext-image ./cmd/draext-kubeadm-config) ||
	die "building draext-image and draext-kubeadm-config failed"

work=$OUT.tmp
rm -rf "$work"
mkdir -p "$work/bin" "$work/images" "$work/config" "$work/tools"
trap 'rm -rf "$work"' EXIT
for b in "${COMPONENTS[@]}" kubelet kubectl kubeadm; do
	cp "$BIN_DIR/$b" "$work/bin/$b"
done
# The gate editor of the upgrade runbook (ConfigMaps kubeadm-config and
# kubelet-config), static like the binaries.
cp "$tools/draext-kubeadm-config" "$work/tools/draext-kubeadm-config"
"$work/bin/kubeadm" version -o short | grep -qxF "$VERSION" ||
	die "kubeadm reports $("$work/bin/kubeadm" version -o short), not $VERSION" "make build, then make release"

# kube-proxy's base: Debian with the tools kube-proxy calls (iptables in
# its default nft mode, conntrack, ipset), without the package manager's
# caches and the device nodes (a container gets its /dev from the runtime).
proxy_base() {
	local rootfs=$RDIR/cache/kube-proxy-rootfs stamp packages=iptables,conntrack,ipset,kmod
	stamp="$DEBIAN_SUITE $DEBIAN_MIRROR $packages"
	if [[ $(cat "$rootfs.stamp" 2>/dev/null) == "$stamp" && -d $rootfs ]]; then
		echo "$rootfs"
		return
	fi
	if ! command -v debootstrap >/dev/null; then
		log "installing debootstrap"
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
			die "apt-get install debootstrap failed"
	fi
	log "debootstrap $DEBIAN_SUITE with $packages for kube-proxy's base"
	rm -rf "$rootfs" "$rootfs.stamp"
	mkdir -p "$(dirname "$rootfs")"
	debootstrap --variant=minbase --include="$packages" "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" >"$RDIR/cache/debootstrap.log" 2>&1 ||
		{ tail -5 "$RDIR/cache/debootstrap.log" >&2; die "debootstrap failed (log: ${RDIR#"$DRAEXT_ROOT"/}/cache/debootstrap.log)"; }
	find "$rootfs/dev" "$rootfs/proc" "$rootfs/sys" "$rootfs/run" -mindepth 1 -delete 2>/dev/null || true
	rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc "$rootfs"/usr/share/man \
		"$rootfs"/usr/share/locale "$rootfs"/var/log/*
	# Anything else that is no file, directory or link cannot go into an image.
	find "$rootfs" ! -type f ! -type d ! -type l -delete
	echo "$stamp" >"$rootfs.stamp"
	echo "$rootfs"
}

log "images"
for c in "${COMPONENTS[@]}"; do
	root=$work/img-$c
	if [[ $c == kube-proxy ]]; then
		base=$(proxy_base)
		mkdir -p "$root"
		cp -a "$base/." "$root/"
	fi
	mkdir -p "$root/usr/local/bin"
	cp "$BIN_DIR/$c" "$root/usr/local/bin/$c"
	"$tools/draext-image" --name "registry.k8s.io/$c:$VERSION" --tag "registry.k8s.io/$c-$ARCH:$VERSION" \
		--root "$root" --entrypoint "/usr/local/bin/$c" --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--output "$work/images/$c.tar" || die "packing the image of $c failed"
	rm -rf "$root"
	info "images/$c.tar: registry.k8s.io/$c:$VERSION, registry.k8s.io/$c-$ARCH:$VERSION ($(du -h "$work/images/$c.tar" | cut -f1))"
done
IMAGE=localhost/draext/draext-gpu:$VERSION IMAGE_TAGS=localhost/draext/draext-gpu:dev IMAGE_OUT=$work/images/draext-gpu.tar \
	bash "$DRAEXT_ROOT/scripts/build/driver-image.sh"

log "overlays and configuration"
cp -r "$DRAEXT_ROOT/overlays" "$work/overlays"
# The released driver image, not :dev (make up's tag).
cat >>"$work/overlays/base/kustomization.yaml" <<YAML
images:
  - name: localhost/draext/draext-gpu
    newTag: $VERSION
YAML
"$tools/draext-kubeadm-config" --kind-config "$DRAEXT_ROOT/$KIND_SOURCE" --version "$VERSION" \
	--kubeadm "$work/config/kubeadm-config.yaml" --containerd "$work/config/containerd-cdi.toml" ||
	die "deriving the kubeadm configuration from $KIND_SOURCE failed"
# kubeadm's own checks: the configuration validates, and the images it would
# pull for it are the ones in images/.
"$work/bin/kubeadm" config validate --config "$work/config/kubeadm-config.yaml" >/dev/null ||
	die "kubeadm config validate rejects config/kubeadm-config.yaml"
wanted=$("$work/bin/kubeadm" config images list --config "$work/config/kubeadm-config.yaml" 2>/dev/null | grep -E '/kube-(apiserver|controller-manager|scheduler|proxy):' | sort)
shipped=$(printf 'registry.k8s.io/%s:'"$VERSION"'\n' "${COMPONENTS[@]}" | sort)
[[ $wanted == "$shipped" ]] || die "kubeadm pulls other images than the release ships" "kubeadm: $(tr '\n' ' ' <<<"$wanted")" "images/: $(tr '\n' ' ' <<<"$shipped")"

sed -e "s/@VERSION@/$VERSION/g" -e "s/@ARCH@/$ARCH/g" -e "s|@KIND_SOURCE@|$KIND_SOURCE|g" \
	"$DRAEXT_ROOT/scripts/build/release-readme.md" >"$work/README.md"
(cd "$work" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs sha256sum) >"$RDIR/SHA256SUMS.tmp"
mv "$RDIR/SHA256SUMS.tmp" "$work/SHA256SUMS"

rm -rf "$OUT"
mv "$work" "$OUT"
trap - EXIT
log "release $VERSION: ${OUT#"$DRAEXT_ROOT"/} ($(du -sh "$OUT" | cut -f1), $(($(now_s) - start))s); check it: cd ${OUT#"$DRAEXT_ROOT"/} && sha256sum -c SHA256SUMS"
