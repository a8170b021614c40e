#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# generate-verify.sh draext|base
#
#   draext  proves the generated patches are exactly what the generators produce:
#           regenerating a fresh checkout of branch draext must give zero diff.
#   base    proves the generator setup itself: regenerating a fresh checkout of
#           the pristine base tag must reproduce upstream's generated files.
#
# The checkout is a worktree under _output; it is kept for inspection on failure.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

case ${1:-draext} in
draext)
	"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
	ref=refs/heads/$PATCH_BRANCH label="branch $PATCH_BRANCH" wt=$OUTPUT_DIR/gen-verify
	fix="run make generate, commit on $PATCH_BRANCH (gen: patch) and make patches-export"
	;;
base)
	"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
	ref="refs/tags/$(git_tag)^{commit}" label="pristine $(git_tag)" wt=$OUTPUT_DIR/gen-base
	fix="the generator setup in scripts/series/generate.sh does not reproduce upstream; fix it before trusting gen: patches"
	;;
*) die "generate-verify.sh: unknown argument '$1'" "use draext or base" ;;
esac

fresh_worktree "$wt" "$ref"
log "regenerating a fresh checkout of $label in ${wt#"$DRAEXT_ROOT"/}"
TREE=$wt "$DRAEXT_ROOT/scripts/series/generate.sh"
changes=$(git -C "$wt" status --porcelain)
if [[ -n $changes ]]; then
	die "regenerating $label changes $(wc -l <<<"$changes") path(s):" "$(head -20 <<<"$changes")" "$fix; worktree kept: $wt"
fi
remove_worktree "$wt"
log "generate-verify: regenerating $label gives zero diff"
