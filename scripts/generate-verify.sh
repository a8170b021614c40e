#!/usr/bin/env bash
# Proves the generated patches are exactly what the generators produce: runs
# scripts/generate.sh on a fresh checkout of branch draext and requires zero diff.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$DRAEXT_ROOT/scripts/patches-apply.sh" --if-needed
wt=$OUTPUT_DIR/gen-verify
if [[ -e $wt ]]; then
	git -C "$KUBE_TREE" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
fi
git -C "$KUBE_TREE" worktree prune
git -C "$KUBE_TREE" worktree add --quiet --detach "$wt" "refs/heads/$PATCH_BRANCH"
log "regenerating a fresh checkout of $PATCH_BRANCH in ${wt#"$DRAEXT_ROOT"/}"
TREE=$wt "$DRAEXT_ROOT/scripts/generate.sh"
changes=$(git -C "$wt" status --porcelain)
if [[ -n $changes ]]; then
	die "the generated code in the series is stale: regenerating $PATCH_BRANCH changes $(wc -l <<<"$changes") paths:" \
		"$(head -20 <<<"$changes")" "run make generate, commit on $PATCH_BRANCH (gen: patch) and make patches-export; worktree kept: $wt"
fi
git -C "$KUBE_TREE" worktree remove --force "$wt"
log "generate-verify: regenerating $PATCH_BRANCH gives zero diff"
