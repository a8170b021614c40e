#!/usr/bin/env bash
# Proves the generator setup of scripts/generate.sh: it regenerates everything
# on a fresh checkout of the pristine base tag, and the result must be
# byte-identical to upstream's committed generated files (git status empty).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$DRAEXT_ROOT/scripts/fetch-upstream.sh"
TAG=$(git_tag)
wt=$OUTPUT_DIR/gen-base
if [[ -e $wt ]]; then
	git -C "$KUBE_TREE" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
fi
git -C "$KUBE_TREE" worktree prune
git -C "$KUBE_TREE" worktree add --quiet --detach "$wt" "refs/tags/$TAG^{commit}"
log "regenerating the pristine $TAG in ${wt#"$DRAEXT_ROOT"/}"
TREE=$wt "$DRAEXT_ROOT/scripts/generate.sh"
changes=$(git -C "$wt" status --porcelain)
if [[ -n $changes ]]; then
	die "the generators do not reproduce upstream's generated files of $TAG ($(wc -l <<<"$changes") paths differ):" \
		"$(head -20 <<<"$changes")" "the worktree is kept for inspection: $wt"
fi
git -C "$KUBE_TREE" worktree remove --force "$wt"
log "generate-check-base: regenerating $TAG reproduces upstream byte for byte"
