#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds etcd (ETCD_VERSION, the version Kubernetes v1.33 tests with) from the Go
# module proxy into _output/tools/etcd/etcd. `go install ...@v<version>` is refused because of
# the module's replace directives, so a small module requires it and builds it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

dir=$TOOLS_DIR/etcd
if [[ -x $dir/etcd ]] && "$dir/etcd" --version 2>/dev/null | grep -q "etcd Version: $ETCD_VERSION"; then
	info "etcd $ETCD_VERSION already built"
	exit 0
fi
need_base_tools
log "building etcd $ETCD_VERSION from the Go module proxy"
start=$(now_s)
mkdir -p "$dir/src"
cd "$dir/src"
printf 'module draext.local/etcd\n\ngo %s\n' "$GO_MIN_VERSION" >go.mod
rm -f go.sum
export GOWORK=off GOFLAGS=-mod=mod
go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >/dev/null 2>&1 ||
	die "could not fetch go.etcd.io/etcd/server/v3@v$ETCD_VERSION" "check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY))"
CGO_ENABLED=0 go build -trimpath -o "$dir/etcd" go.etcd.io/etcd/server/v3 ||
	die "building etcd $ETCD_VERSION failed (see above)"
info "$("$dir/etcd" --version | head -1) in $(($(now_s) - start))s"
