#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# clean.sh upstream|all: remove _output/kubernetes and its worktree of the base
# (make build-base; and for "all" everything under _output). Refuses while the tree holds work that exists nowhere else:
# uncommitted changes, draext commits not exported, or draext-saved-* branches.
# FORCE=1 removes it anyway.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

what=${1:-upstream}
if [[ -d $KUBE_TREE/.git && $FORCE != 1 ]]; then
	problems=()
	dirty=$(tree_dirty)
	[[ -z $dirty ]] || problems+=("uncommitted changes: $(head -3 <<<"$dirty" | tr '\n' ' ')")
	if git -C "$KUBE_TREE" rev-parse -q --verify "refs/heads/$PATCH_BRANCH" >/dev/null; then
		# Unexported work: draext does not export to exactly the committed series.
		tmp=$(mktemp -d)
		export_series "$KUBE_TREE" "refs/tags/$(git_tag)..refs/heads/$PATCH_BRANCH" "$tmp"
		same=true
		cmp -s "$tmp/series" "$PATCH_DIR/series" || same=false
		for f in "$tmp"/*.patch; do
			[[ -e $f ]] || continue
			cmp -s "$f" "$PATCH_DIR/$(basename "$f")" || same=false
		done
		rm -rf "$tmp"
		$same || problems+=("branch $PATCH_BRANCH differs from patches/$RELEASE_BRANCH (make patches-export to keep it)")
	fi
	saved=$(git -C "$KUBE_TREE" for-each-ref --format='%(refname:short)' "refs/heads/$PATCH_BRANCH-saved-*")
	[[ -z $saved ]] || problems+=("kept-aside branches: $(tr '\n' ' ' <<<"$saved")")
	[[ ${#problems[@]} -eq 0 ]] || die "${KUBE_TREE#"$DRAEXT_ROOT"/} holds work that would be lost; nothing was removed:" \
		"${problems[@]}" "export or move it first, or run again with FORCE=1 to remove it anyway"
fi
case $what in
upstream) rm -rf "$KUBE_TREE" "$KUBE_TREE.partial" "$BASE_TREE" && log "removed ${KUBE_TREE#"$DRAEXT_ROOT"/} and ${BASE_TREE#"$DRAEXT_ROOT"/}" ;;
all) rm -rf "$OUTPUT_DIR" && log "removed ${OUTPUT_DIR#"$DRAEXT_ROOT"/}" ;;
*) die "clean.sh: unknown argument '$what'" "use upstream or all" ;;
esac
