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
#
# A series whose TOPICS.md says "- Topics: independent" (the forward series,
# RELEASE_BRANCH=v1.37) is not a stack: each branch pr/NN-<topic> holds the
# base tag and that topic's patches alone, and is checked alone: the packages
# its patches change must build and vet, and their tests (those of the
# packages of every changed .go file) must pass. TOPIC=<id> checks one topic.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
TAG=$(git_tag)
start=$(now_s)
lint=$(series_tool lint "$PATCH_DIR" 2>&1) || die "the series is not valid, fix it first:" "$lint"
layout=$(series_tool layout "$PATCH_DIR") || die "cannot read how the topics of ${PATCH_DIR#"$DRAEXT_ROOT"/} relate"
mapfile -t topics < <(series_tool topics -upstream "$PATCH_DIR")
only=$TOPIC
[[ -z $only || $layout == independent ]] || die "TOPIC=$only: only the topics of an independent series stand alone" "leave TOPIC out for ${PATCH_DIR#"$DRAEXT_ROOT"/}"

stack_wt=$OUTPUT_DIR$SERIES_OUT/pr-stack
pr_dir=$OUTPUT_DIR$SERIES_OUT/pr
trap 'remove_worktree "$stack_wt"' EXIT

# Branches of an earlier run go: a topic may have been renamed or dropped.
if [[ -z $only ]]; then
	mapfile -t old < <(git -C "$KUBE_TREE" for-each-ref --format='%(refname:short)' 'refs/heads/pr/')
	[[ ${#old[@]} -eq 0 ]] || git -C "$KUBE_TREE" branch --quiet -D "${old[@]}"
	rm -rf "$pr_dir"
fi
mkdir -p "$pr_dir"

# check_alone WORKTREE TOPIC: the packages that the topic's commits change
# build, vet and pass their tests on the base alone.
check_alone() {
	local wt=$1 topic=$2 pkgs=() t0
	mapfile -t pkgs < <(git -C "$wt" diff --name-only "refs/tags/$TAG" HEAD -- '*.go' |
		xargs -r -n1 dirname | sort -u | sed 's|^|./|')
	if [[ ${#pkgs[@]} -eq 0 ]]; then
		info "topic $topic changes no Go package"
		return 0
	fi
	t0=$(now_s)
	(cd "$wt" && go build "${pkgs[@]}" && go vet "${pkgs[@]}") ||
		die "topic $topic does not build or vet on $TAG alone (see above): ${pkgs[*]}"
	(cd "$wt" && go test -count=1 "${pkgs[@]}") ||
		die "the tests of topic $topic fail on $TAG alone (see above): ${pkgs[*]}"
	info "topic $topic: ${#pkgs[@]} package(s) built, vetted and tested on $TAG alone ($(($(now_s) - t0))s)"
}

fresh_worktree "$stack_wt" "refs/tags/$TAG^{commit}"
i=0
described=0
found=0
for line in "${topics[@]}"; do
	read -r topic upstream files <<<"$line"
	i=$((i + 1))
	name=$(printf '%02d-%s' "$i" "$topic")
	[[ -z $only || $only == "$topic" ]] || continue
	found=1
	# An independent topic starts from the tag; a stacked one from the
	# topics before it.
	[[ $layout != independent ]] || git -C "$stack_wt" checkout --quiet --detach "refs/tags/$TAG^{commit}"
	n=0
	for f in $files; do
		if ! why=$(apply_patch "$stack_wt" "$PATCH_DIR/$f"); then
			if [[ $layout == independent ]]; then
				die "topic $topic: $f does not apply on $TAG with the topic's patches before it:" "$why"
			fi
			die "topic $topic: $f does not apply on the topics before it (pr/$(printf '%02d' "$((i - 1))")-*):" "$why" \
				"the series does not apply in its own order: make patches-apply says more"
		fi
		n=$((n + 1))
	done
	git -C "$KUBE_TREE" branch --quiet -f "pr/$name" "$(git -C "$stack_wt" rev-parse HEAD)"
	[[ $layout != independent ]] || check_alone "$stack_wt" "$topic"
	if [[ $upstream != proposal ]]; then
		info "pr/$name: $n patch(es), $upstream: no upstream pull request, so no description"
		continue
	fi
	series_tool pr "$PATCH_DIR" "$topic" >"$pr_dir/$name.md"
	described=$((described + 1))
	info "pr/$name: $n patch(es), description in ${pr_dir#"$DRAEXT_ROOT"/}/$name.md"
done
[[ -z $only || $found == 1 ]] || die "TOPIC=$only: no such topic in ${PATCH_DIR#"$DRAEXT_ROOT"/}/TOPICS.md"

if [[ $layout == independent ]]; then
	checked=${#topics[@]}
	[[ -z $only ]] || checked=1
	log "pr-branches: $checked independent topic branch(es) pr/NN-<topic> in ${KUBE_TREE#"$DRAEXT_ROOT"/}, each on $TAG alone, built and tested alone; $described description(s) in ${pr_dir#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s)"
else
	log "pr-branches: ${#topics[@]} topic branch(es) pr/NN-<topic> in ${KUBE_TREE#"$DRAEXT_ROOT"/}, the last with the whole series; $described description(s) of proposal topics in ${pr_dir#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s)"
fi
