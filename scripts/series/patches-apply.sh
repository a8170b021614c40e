#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Applies the series with `git am -3` onto a fresh branch draext at the base tag
# of _output/kubernetes, fetching the upstream source first when needed.
#
#   --if-needed   do nothing when draext already holds exactly this series
#
# It never destroys work: a dirty tree is refused, and an existing draext branch
# with other content is kept as draext-saved-<time> (the message says so).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

if_needed=false
[[ ${1:-} == --if-needed ]] && if_needed=true

"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
TAG=$(git_tag)
stamp=$KUBE_TREE/.git/draext-series-hash
want=$(series_hash)

if $if_needed && git -C "$KUBE_TREE" rev-parse -q --verify "refs/heads/$PATCH_BRANCH" >/dev/null &&
	[[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
	info "branch $PATCH_BRANCH already has the committed series (nothing to apply)"
	exit 0
fi

if [[ -d $KUBE_TREE/.git/rebase-apply || -d $KUBE_TREE/.git/rebase-merge ]]; then
	die "a git am or rebase is in progress in ${KUBE_TREE#"$DRAEXT_ROOT"/}" \
		"finish it (git am --continue) or abort it (git -C $KUBE_TREE am --abort), then retry"
fi
dirty=$(tree_dirty)
if [[ -n $dirty ]]; then
	die "${KUBE_TREE#"$DRAEXT_ROOT"/} has uncommitted changes; nothing was changed:" \
		"$(head -5 <<<"$dirty")" \
		"commit them on $PATCH_BRANCH (then make patches-export) or stash them (git -C $KUBE_TREE stash), then retry"
fi

mapfile -t patches < <(series_files)
log "applying ${#patches[@]} patch(es) of patches/$RELEASE_BRANCH onto $TAG"
start=$(now_s)

# Build the new branch next to the old one, so a failure leaves draext untouched.
work=$PATCH_BRANCH-applying
git -C "$KUBE_TREE" checkout --quiet --force -B "$work" "refs/tags/$TAG^{commit}"
for p in "${patches[@]}"; do
	[[ -f $p ]] || die "patch listed in series is missing: ${p#"$DRAEXT_ROOT"/}"
	if ! why=$(apply_patch "$KUBE_TREE" "$p"); then
		git -C "$KUBE_TREE" checkout --quiet --force "$PATCH_BRANCH" 2>/dev/null ||
			git -C "$KUBE_TREE" checkout --quiet --force "refs/tags/$TAG^{commit}"
		git -C "$KUBE_TREE" branch --quiet -D "$work"
		die "patch $(basename "$p") does not apply to $TAG; the tree was left as it was." \
			"$why" \
			"Rebase it: apply the patches before it (they are fine), fix the conflict, commit, make patches-export."
	fi
	info "applied $(basename "$p")"
done

if git -C "$KUBE_TREE" rev-parse -q --verify "refs/heads/$PATCH_BRANCH" >/dev/null; then
	if [[ $(git -C "$KUBE_TREE" rev-parse "$PATCH_BRANCH^{tree}") != $(git -C "$KUBE_TREE" rev-parse "$work^{tree}") ]] ||
		[[ $(git -C "$KUBE_TREE" rev-list --count "refs/tags/$TAG..$PATCH_BRANCH") != $(git -C "$KUBE_TREE" rev-list --count "refs/tags/$TAG..$work") ]]; then
		saved=$PATCH_BRANCH-saved-$(date -u +%Y%m%dT%H%M%SZ)
		git -C "$KUBE_TREE" branch --quiet -m "$PATCH_BRANCH" "$saved"
		warn "the previous $PATCH_BRANCH branch differed from the series; it is kept as branch $saved"
	else
		git -C "$KUBE_TREE" branch --quiet -D "$PATCH_BRANCH"
	fi
fi
git -C "$KUBE_TREE" branch --quiet -m "$work" "$PATCH_BRANCH"
echo "$want" >"$stamp"
log "branch $PATCH_BRANCH of ${KUBE_TREE#"$DRAEXT_ROOT"/} has the series ($(($(now_s) - start))s)"
