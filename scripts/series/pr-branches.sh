#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make pr-branches: one git branch per topic of the series in
# _output/kubernetes, stacked on the base tag in the order of
# patches/<release>/TOPICS.md: pr/01-<first topic> holds the base tag and that
# topic's patches, pr/02-<second> adds the second topic's, and so on, so each
# branch is one pull request on top of the one before it, for review and
# cherry-picking. Each proposal topic's pull request description
# (draext-series pr) is written beside them to _output/pr/NN-<topic>.md; a
# carry topic (upstream has it) and a local one (only this series needs it)
# get a branch but no description.
#
# draext-series lint (run first) wants the patches of a topic together, in the
# order of TOPICS.md, so applying topic after topic replays the series in its
# own order: the branches cut the series into topics, and the last one is the
# whole series.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
TAG=$(git_tag)
start=$(now_s)
lint=$(series_tool lint "$PATCH_DIR" 2>&1) || die "the series is not valid, fix it first:" "$lint"
mapfile -t topics < <(series_tool topics -upstream "$PATCH_DIR")

stack_wt=$OUTPUT_DIR/pr-stack
trap 'remove_worktree "$stack_wt"' EXIT

# Branches of an earlier run go: a topic may have been renamed or dropped.
mapfile -t old < <(git -C "$KUBE_TREE" for-each-ref --format='%(refname:short)' 'refs/heads/pr/')
[[ ${#old[@]} -eq 0 ]] || git -C "$KUBE_TREE" branch --quiet -D "${old[@]}"
rm -rf "$OUTPUT_DIR/pr"
mkdir -p "$OUTPUT_DIR/pr"

fresh_worktree "$stack_wt" "refs/tags/$TAG^{commit}"
i=0
described=0
for line in "${topics[@]}"; do
	read -r topic upstream files <<<"$line"
	i=$((i + 1))
	name=$(printf '%02d-%s' "$i" "$topic")
	n=0
	for f in $files; do
		if ! why=$(apply_patch "$stack_wt" "$PATCH_DIR/$f"); then
			die "topic $topic: $f does not apply on the topics before it (pr/$(printf '%02d' "$((i - 1))")-*):" "$why" \
				"the series does not apply in its own order: make patches-apply says more"
		fi
		n=$((n + 1))
	done
	git -C "$KUBE_TREE" branch --quiet -f "pr/$name" "$(git -C "$stack_wt" rev-parse HEAD)"
	if [[ $upstream != proposal ]]; then
		info "pr/$name: $n patch(es), $upstream: no upstream pull request, so no description"
		continue
	fi
	series_tool pr "$PATCH_DIR" "$topic" >"$OUTPUT_DIR/pr/$name.md"
	described=$((described + 1))
	info "pr/$name: $n patch(es), description in ${OUTPUT_DIR#"$DRAEXT_ROOT"/}/pr/$name.md"
done

log "pr-branches: ${#topics[@]} topic branch(es) pr/NN-<topic> in ${KUBE_TREE#"$DRAEXT_ROOT"/}, the last with the whole series; $described description(s) of proposal topics in ${OUTPUT_DIR#"$DRAEXT_ROOT"/}/pr ($(($(now_s) - start))s)"
