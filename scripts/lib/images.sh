# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Images the scripts build: docker build with a kept log, the pause binary,
# busybox roots. Source it; do not run it.
source "$(dirname "${BASH_SOURCE[0]}")/series.sh"

# docker_build LOG TAG DOCKER-BUILD-ARGS...: docker build -t TAG (classic
# builder: no buildx offline), its output kept in LOG; when it fails, the last
# lines of LOG and one ERROR line naming TAG and LOG.
docker_build() {
	local log=$1 tag=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	if ! DOCKER_BUILDKIT=0 docker build -t "$tag" "$@" >"$log" 2>&1; then
		tail -n 15 "$log" | sed 's/^/    | /' >&2 || true
		die "docker build of $tag failed: $(grep -v '^[[:space:]]*$' "$log" | tail -1)" "log: ${log#"$DRAEXT_ROOT"/}"
	fi
}

# build_pause DIR TAG: DIR/pause, a static pause binary from the tree's
# build/pause/linux/pause.c that reports version TAG-draext (the pause images
# of the local cluster and of the kind node image).
build_pause() {
	local src=$KUBE_TREE/build/pause/linux/pause.c
	[[ -f $src ]] || die "no $src to build pause from" "run make fetch first (the caller's entry script should)"
	mkdir -p "$1"
	gcc -Os -static -o "$1/pause" "$src" -DVERSION="$2-draext" ||
		die "building pause $2 failed" "gcc and a static libc are needed: apt-get install -y gcc libc6-dev"
	strip "$1/pause" 2>/dev/null || true
}

# busybox_root DIR APPLET...: DIR/bin/busybox from Debian's busybox-static
# with a link for each applet (the busybox images of the local cluster and of
# kind's local-path helper).
busybox_root() {
	local dir=$1 applet
	shift
	[[ -x /bin/busybox ]] || die "/bin/busybox is missing" "install Debian's busybox-static: apt-get install -y busybox-static"
	mkdir -p "$dir/bin"
	cp /bin/busybox "$dir/bin/busybox"
	for applet in "$@"; do ln -sf busybox "$dir/bin/$applet"; done
}

# default_node_image: the kind node image's tag when NODE_IMAGE is empty.
default_node_image() { echo "localhost/draext/kind-node:$(draext_version)"; }
