#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Checks that the series is bisectable: applies the patches one by one on a
# fresh checkout of the base tag and, after each, type-checks (go vet, which
# also compiles the tests) every Go package the series has changed so far.
# (make patches-verify checks that each patch is gofmt-clean.)
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
TAG=$(git_tag)
wt=$OUTPUT_DIR/bisect
fresh_worktree "$wt" "refs/tags/$TAG^{commit}"
trap 'remove_worktree "$wt"' EXIT

mapfile -t patches < <(series_files)
check_disk_space 8 "make patches-bisect" "$(go env GOCACHE)" "$OUTPUT_DIR"
start=$(now_s)
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	name=$(basename "$p")
	why=$(apply_patch "$wt" "$p") || die "patch $name does not apply:" "$why"
	mapfile -t pkgs < <(git -C "$wt" diff --name-only --diff-filter=d "refs/tags/$TAG" HEAD | series_tool packages "$wt")
	[[ ${#pkgs[@]} -gt 0 ]] || { info "$name: no Go package changed"; continue; }
	t0=$(now_s)
	if ! out=$(cd "$wt" && go vet "${pkgs[@]}" 2>&1); then
		die "the series does not build after $name:" "$(grep -v '^#' <<<"$out" | head -15)"
	fi
	info "$name: ${#pkgs[@]} package(s) build and vet ($(($(now_s) - t0))s)"
done
log "patches-bisect: every step of the series builds ($(($(now_s) - start))s)"
