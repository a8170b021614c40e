#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds a kind node image of the patched binaries, tagged with our version:
# localhost/draext/kind-node:v1.33.13-draext.<N>.
#
# It writes a kubernetes-server-linux-<arch>.tar.gz (kubernetes/version and
# server/bin/{kubeadm,kubelet,kubectl} plus the component image archives) and
# runs the pinned kind (KIND_VERSION) `kind build node-image --type file` on it.
# RELEASE_DIR=_output/release/<version>: the binaries and component images of
# that release (make release), checked against its SHA256SUMS, instead of
# _output/bin and images built here.
# BASE=1: stock v<GIT_TAG> instead (make build-base's binaries, which include
# kube-proxy and kubeadm here), tagged localhost/draext/kind-node:v<GIT_TAG>:
# the cluster make kind-upgrade-test upgrades.
#
# ONLINE=1: the standard kindest/base, and kind fetches the images it does not
# build (etcd, coredns, pause, kindnetd, local-path-*) as usual.
# Default (offline, this machine): the base from make kind-base, and every
# image kind would fetch is built here from source (Go module proxy) with the
# exact tag kind expects and shipped in kube-proxy.tar, so kind fetches
# nothing. kindnetd's source is not served by the proxy: its tag carries a
# placeholder, which is why kind-configs/ disable the default CNI offline.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/images.sh"

ARCH=$(go env GOARCH)
KDIR=$OUTPUT_DIR/kind
VERSION=$(draext_version)
if [[ ${BASE:-0} == 1 ]]; then
	[[ -z ${RELEASE_DIR:-} ]] || die "BASE=1 and RELEASE_DIR= exclude each other"
	VERSION=$(git_tag)
	NODE_IMAGE=${NODE_IMAGE:-localhost/draext/kind-node:$VERSION}
fi
NODE_IMAGE=${NODE_IMAGE:-$(default_node_image)}
# Offline, start draext's Docker engine when none runs, and stop it again at
# the end if this script started it (make kind-up starts it when it needs it).
if [[ $ONLINE != 1 && -z $(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env) ]] && ! docker info >/dev/null 2>&1; then
	bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" up
	stop_docker=1
	trap 'bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" down' EXIT
fi
eval "$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env | sed 's/^/export DOCKER_HOST=/')"
docker info >/dev/null 2>&1 || die "no Docker engine: make docker-up (or start Docker)"
start=$(now_s)
mkdir -p "$KDIR/bin"

# Tools: kind itself.
if ! "$KDIR/bin/kind" version 2>/dev/null | grep -q "kind $KIND_VERSION "; then
	log "building kind $KIND_VERSION"
	GOWORK=off GOBIN=$KDIR/bin go install "sigs.k8s.io/kind@$KIND_VERSION" || die "building kind failed"
fi

REL=${RELEASE_DIR:-}
if [[ -n $REL ]]; then
	[[ -f $REL/SHA256SUMS ]] || die "RELEASE_DIR=$REL holds no release" "make release"
	(cd "$REL" && sha256sum --quiet -c SHA256SUMS) || die "the files of $REL do not match its SHA256SUMS"
	VERSION=$("$REL/bin/kubeadm" version -o short)
	[[ $VERSION == "$(draext_version)" ]] ||
		die "the release in $REL is $VERSION, the checkout's series $(draext_version)" "make release first"
	SRCBIN=$REL/bin
	info "from the release in ${REL#"$DRAEXT_ROOT"/} ($VERSION)"
elif [[ ${BASE:-0} == 1 ]]; then
	# Stock binaries from the worktree at the tag (incremental).
	BASE=1 WHAT="kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy" bash "$DRAEXT_ROOT/scripts/build/build.sh"
	SRCBIN=$BASE_BIN_DIR
	info "stock $VERSION from ${SRCBIN#"$DRAEXT_ROOT"/}"
else
	# Binaries of the series (incremental).
	WHAT="kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy" bash "$DRAEXT_ROOT/scripts/build/build.sh"
	SRCBIN=$BIN_DIR
fi

work=$KDIR/work
rm -rf "$work"
mkdir -p "$work/kubernetes/server/bin"
trap 'rm -rf "$work"; [[ -n ${stop_docker:-} ]] && bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" down || true' EXIT
echo "$VERSION" >"$work/kubernetes/version"
for b in kubeadm kubelet kubectl; do cp "$SRCBIN/$b" "$work/kubernetes/server/bin/"; done

# image TAG DIR ENTRYPOINT... [--from BASE]: build an image from a directory.
image() {
	local tag=$1 dir=$2 from=scratch
	shift 2
	if [[ ${1:-} == --from ]]; then
		from=$2
		shift 2
	fi
	local ep
	ep=$(printf '"%s",' "$@")
	{
		echo "FROM $from"
		echo "COPY . /"
		echo "ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
		[[ $# -eq 0 ]] || echo "ENTRYPOINT [${ep%,}]"
	} >"$dir/Dockerfile"
	docker_build "$KDIR/docker-build.log" "$tag" -f "$dir/Dockerfile" "$dir"
	rm -f "$dir/Dockerfile"
}
# bindir NAME BINARY: a directory holding BINARY at /usr/local/bin/NAME.
bindir() {
	local d=$work/img-$1
	mkdir -p "$d/usr/local/bin"
	cp "$2" "$d/usr/local/bin/$1"
	echo "$d"
}

log "component images $VERSION"
tag=${VERSION//+/_}
base=$BASE_IMAGE
if [[ $ONLINE != 1 ]]; then
	docker image inspect "$base" >/dev/null 2>&1 || bash "$DRAEXT_ROOT/scripts/kind/base-image.sh"
fi
if [[ -n $REL ]]; then
	# The release's archives carry kind's -<arch> tags.
	for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
		docker load -i "$REL/images/$c.tar" >/dev/null || die "docker load of the release's images/$c.tar failed"
		docker image inspect "registry.k8s.io/$c-$ARCH:$tag" >/dev/null 2>&1 ||
			die "the release's images/$c.tar has no registry.k8s.io/$c-$ARCH:$tag"
	done
else
	for c in kube-apiserver kube-controller-manager kube-scheduler; do
		image "registry.k8s.io/$c-$ARCH:$tag" "$(bindir "$c" "$SRCBIN/$c")" "/usr/local/bin/$c"
	done
	# kube-proxy needs iptables and conntrack: it gets the node base's user space.
	if [[ $ONLINE != 1 ]]; then
		image "registry.k8s.io/kube-proxy-$ARCH:$tag" "$(bindir kube-proxy "$SRCBIN/kube-proxy")" --from "$base" /usr/local/bin/kube-proxy
	else
		image "registry.k8s.io/kube-proxy-$ARCH:$tag" "$(bindir kube-proxy "$SRCBIN/kube-proxy")" --from "debian:$DEBIAN_SUITE-slim" /usr/local/bin/kube-proxy
	fi
fi
for c in kube-apiserver kube-controller-manager kube-scheduler; do
	docker save "registry.k8s.io/$c-$ARCH:$tag" -o "$work/kubernetes/server/bin/$c.tar" ||
		die "docker save of registry.k8s.io/$c-$ARCH:$tag failed"
done
extra=()
if [[ $ONLINE != 1 ]]; then
	log "images kind would fetch, built from source"
	bash "$DRAEXT_ROOT/scripts/cluster/deps.sh" >/dev/null
	kind_src=$(module_dir sigs.k8s.io/kind "$KIND_VERSION")
	kindnetd=$(grep -o 'docker.io/kindest/kindnetd:[^"]*' "$kind_src/pkg/build/nodeimage/const_cni.go")
	provisioner=$(grep -o 'docker.io/kindest/local-path-provisioner:[^"]*' "$kind_src/pkg/build/nodeimage/const_storage.go")
	helper=$(grep -o 'docker.io/kindest/local-path-helper:[^"]*' "$kind_src/pkg/build/nodeimage/const_storage.go")
	[[ -n $kindnetd && -n $provisioner && -n $helper ]] || die "could not read kind $KIND_VERSION's image names"
	mapfile -t wanted < <("$SRCBIN/kubeadm" config images list --kubernetes-version "$VERSION" 2>/dev/null)
	etcd_tag=$(printf '%s\n' "${wanted[@]}" | grep /etcd: | cut -d: -f2)
	coredns_tag=$(printf '%s\n' "${wanted[@]}" | grep /coredns: | cut -d: -f2)
	pause_tag=$(grep -o 'registry.k8s.io/pause:[^"]*' "$kind_src/images/base/files/etc/containerd/config.toml" | cut -d: -f2)
	[[ -n $etcd_tag && -n $coredns_tag && -n $pause_tag ]] || die "kubeadm did not list etcd/coredns, or kind has no pause tag"

	if ! "$KDIR/bin/coredns" -version 2>/dev/null | grep -q "CoreDNS-${coredns_tag#v}"; then
		GOWORK=off GOBIN=$KDIR/bin CGO_ENABLED=0 go install "github.com/coredns/coredns@$coredns_tag" || die "building coredns $coredns_tag failed"
	fi
	[[ -x $KDIR/bin/local-path-provisioner ]] ||
		GOWORK=off GOBIN=$KDIR/bin CGO_ENABLED=0 go install "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" ||
		die "building local-path-provisioner failed"

	image "registry.k8s.io/etcd:$etcd_tag" "$(bindir etcd "$TOOLS_DIR/etcd/etcd")" /usr/local/bin/etcd
	d=$work/img-coredns
	mkdir -p "$d"
	cp "$KDIR/bin/coredns" "$d/coredns"
	image "registry.k8s.io/coredns/coredns:$coredns_tag" "$d" /coredns
	d=$work/img-pause
	mkdir -p "$d"
	build_pause "$d" "$pause_tag"
	image "registry.k8s.io/pause:$pause_tag" "$d" /pause
	image "$provisioner" "$(bindir local-path-provisioner "$KDIR/bin/local-path-provisioner")" /usr/local/bin/local-path-provisioner
	d=$work/img-helper
	busybox_root "$d" sh mkdir rm rmdir chmod ls cat echo sleep
	image "$helper" "$d" /bin/sh
	# kindnetd cannot be built here (its module is not served): a labelled
	# placeholder only stops kind from fetching it. Offline clusters disable
	# the default CNI (kind-configs/).
	d=$work/img-kindnetd
	mkdir -p "$d"
	cp "$work/img-pause/pause" "$d/placeholder-not-kindnetd"
	image "$kindnetd" "$d" /placeholder-not-kindnetd
	extra=("registry.k8s.io/etcd:$etcd_tag" "registry.k8s.io/coredns/coredns:$coredns_tag" "registry.k8s.io/pause:$pause_tag"
		"$provisioner" "$helper" "$kindnetd")
fi

# kube-proxy.tar carries the extra images too. kind reads every tag of a
# multi-image archive only when "repositories" comes before manifest.json.
d=$work/proxy-archive
mkdir -p "$d"
docker save "registry.k8s.io/kube-proxy-$ARCH:$tag" "${extra[@]}" | tar -x -C "$d" ||
	die "docker save of kube-proxy and the images kind would fetch failed"
# docker save shortens docker.io/x to x; kind compares full names.
qualify='def q: if (split("/")[0] | test("[.:]")) then . else "docker.io/" + . end;'
jq -c "$qualify with_entries(.key |= q)" "$d/repositories" >"$d/repositories.new" && mv "$d/repositories.new" "$d/repositories"
jq -c "$qualify map(.RepoTags |= map(q))" "$d/manifest.json" >"$d/manifest.new" && mv "$d/manifest.new" "$d/manifest.json"
# repositories and manifest.json first, then the layers and configs.
(cd "$d" && find . -mindepth 1 -maxdepth 1 ! -name repositories ! -name manifest.json -printf '%P\0' | sort -z |
	xargs -0 tar -cf "$work/kubernetes/server/bin/kube-proxy.tar" repositories manifest.json)
rm -rf "$d" "$work"/img-*

tarball=$KDIR/kubernetes-server-linux-$ARCH.tar.gz
tar -C "$work" -czf "$tarball" kubernetes
info "server tarball ${tarball#"$DRAEXT_ROOT"/} ($(du -h "$tarball" | cut -f1))"

log "kind build node-image --type file ($NODE_IMAGE)"
base_args=()
[[ $ONLINE == 1 ]] || base_args=(--base-image "$base")
before=$(ls -d /tmp/k8s-tar-extract-* 2>/dev/null || true)
set +e
"$KDIR/bin/kind" build node-image --type file "${base_args[@]}" --image "$NODE_IMAGE" "$tarball" 2>&1 | tee "$KDIR/node-image.log" | grep -v "^ *$"
rc=${PIPESTATUS[0]}
set -e
# kind leaves its extracted tarball behind (~400 MB).
for t in /tmp/k8s-tar-extract-*; do
	[[ -e $t ]] && ! grep -qxF "$t" <<<"$before" && rm -rf "$t"
done
((rc == 0)) || die "kind build node-image failed (log: ${KDIR#"$DRAEXT_ROOT"/}/node-image.log)"
log "$NODE_IMAGE built ($(($(now_s) - start))s)"
