#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Rewrites patches/<release>/ from branch draext of _output/kubernetes:
# one normalised `git format-patch` file per commit after the base tag and the
# series file in that order. File numbers are stable: a patch keeps its number
# (matched by subject, or by its change when only its message was reworded), so
# folding or adding one renames no other file; gaps are
# allowed. RENUMBER=N renumbers the whole series N, 2N, ... once.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

TAG=$(git_tag)
tree_has_base || die "no upstream tree with tag $TAG in ${KUBE_TREE#"$DRAEXT_ROOT"/}" "run make patches-apply first"
git -C "$KUBE_TREE" rev-parse -q --verify "refs/heads/$PATCH_BRANCH" >/dev/null ||
	die "branch $PATCH_BRANCH does not exist in ${KUBE_TREE#"$DRAEXT_ROOT"/}" "run make patches-apply first"
dirty=$(tree_dirty)
[[ -z $dirty ]] || die "${KUBE_TREE#"$DRAEXT_ROOT"/} has uncommitted changes; commit them on $PATCH_BRANCH first:" "$(head -5 <<<"$dirty")"
range=refs/tags/$TAG..refs/heads/$PATCH_BRANCH
merges=$(git -C "$KUBE_TREE" rev-list --merges "$range")
[[ -z $merges ]] || die "branch $PATCH_BRANCH contains merge commits; a series must be linear" "rebase it onto $TAG"
git -C "$KUBE_TREE" merge-base --is-ancestor "refs/tags/$TAG" "refs/heads/$PATCH_BRANCH" ||
	die "branch $PATCH_BRANCH is not based on $TAG" "rebase it: git -C $KUBE_TREE rebase $TAG $PATCH_BRANCH"

tmp=$(mktemp -d "$OUTPUT_DIR/export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export_series "$KUBE_TREE" "$range" "$tmp" "$RENUMBER"

rm -f "$PATCH_DIR"/*.patch
cp "$tmp"/*.patch "$PATCH_DIR"/ 2>/dev/null || true
cp "$tmp/series" "$PATCH_DIR/series"
series_tool write-sums "$PATCH_DIR"
series_hash >"$KUBE_TREE/.git/draext-series-hash"
log "exported $(grep -c . "$PATCH_DIR/series" || true) patch(es) from $PATCH_BRANCH to patches/$RELEASE_BRANCH"
series_tool lint "$PATCH_DIR" || die "the exported series is missing metadata (see above)" \
	"amend the commit messages on $PATCH_BRANCH (git rebase -i $TAG) and export again"
# The table of patches in docs/patches.md is made from the series (v1.33; the
# forward series is described by its TOPICS.md and docs/upstreaming.md).
if [[ $RELEASE_BRANCH == v1.33 ]]; then
	series_tool table "$PATCH_DIR" "$DRAEXT_ROOT/docs/patches.md" ||
		die "could not write the table of patches into docs/patches.md (see above)"
fi
