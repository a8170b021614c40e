#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make unit: the tests of draext's own code that need no root, no cluster and
# no upstream tree, in a few minutes: go vet and go test of the main module
# (the example driver, the series tooling, the commands), the mock-GPU driver
# on stock libraries (compat/stockdriver, at both of its library versions)
# and the shell helpers' checks (scripts/lib/lib_test.sh).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

need_base_tools
start=$(now_s)
# go-nvml's cgo bindings call deprecated NVML functions; keep gcc quiet about it.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
(cd "$DRAEXT_ROOT" && GOWORK=off go vet ./...) || die "go vet found problems in draext's own Go code (see above)"
(cd "$DRAEXT_ROOT" && GOWORK=off go test -count=1 ./...) || die "unit tests of draext's own Go code failed (see above)"
(cd "$DRAEXT_ROOT/compat/stockdriver" && GOWORK=off go vet ./... && GOWORK=off go test -count=1 ./...) ||
	die "compat/stockdriver at k8s.io/* v0.34 (go.mod) failed (see above)"
(cd "$DRAEXT_ROOT/compat/stockdriver" && GOWORK=off go vet -modfile=go.v037.mod -tags=stockdra_v037 ./... &&
	GOWORK=off go test -count=1 -modfile=go.v037.mod -tags=stockdra_v037 ./...) ||
	die "compat/stockdriver at k8s.io/* v0.37 (go.v037.mod) failed (see above)"
bash "$DRAEXT_ROOT/scripts/lib/lib_test.sh" || die "scripts/lib/lib_test.sh failed: a helper in scripts/ misbehaves"
log "make unit: passed ($(($(now_s) - start)) s)"
