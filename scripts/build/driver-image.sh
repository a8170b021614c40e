#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds the example driver image localhost/draext/draext-gpu:dev.
# Default (no Docker needed): an OCI archive in _output/cluster/images/draext-gpu.tar
# for `ctr -n k8s.io images import` or `kind load image-archive`, holding the binary and the
# glibc libraries it links (go-nvml needs cgo). DOCKER=1: `docker build` with
# images/draext-gpu/Dockerfile instead, on a machine with Docker and network.
# IMAGE_OUT= writes the archive elsewhere, IMAGE_TAGS="ref ..." adds tags (make release).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

if [[ $DOCKER == 1 ]]; then
	need_tool docker "install Docker, or build the OCI archive without it (leave DOCKER unset)"
	docker build -f "$DRAEXT_ROOT/images/draext-gpu/Dockerfile" -t "$IMAGE" "$DRAEXT_ROOT" ||
		die "docker build of $IMAGE failed (see the docker output above)"
	exit 0
fi
need_base_tools
out=${IMAGE_OUT:-$OUTPUT_DIR/cluster/images/draext-gpu.tar}
tags=()
for t in ${IMAGE_TAGS:-}; do tags+=(--tag "$t"); done
bin=$OUTPUT_DIR/cluster/bin
mkdir -p "$bin" "$(dirname "$out")"
(cd "$DRAEXT_ROOT" && GOWORK=off CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations" \
	go build -trimpath -o "$bin/" ./cmd/draext-gpu ./cmd/draext-image) || die "building the example driver failed"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/bin" "$root/tmp"
cp "$bin/draext-gpu" "$root/usr/bin/draext-gpu"
for lib in $(ldd "$bin/draext-gpu" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
"$bin/draext-image" --name "$IMAGE" "${tags[@]}" --root "$root" --entrypoint /usr/bin/draext-gpu --output "$out" ||
	die "packing $IMAGE failed"
info "$IMAGE: ${out#"$DRAEXT_ROOT"/} ($(du -h "$out" | cut -f1))"
