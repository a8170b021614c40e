#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Puts the pristine upstream source of GIT_TAG into _output/kubernetes as a git
# repository whose base commit is tagged GIT_TAG.
#
# Sources, in order of preference:
#   KUBE_SRC=/path/to/kubernetes     a local git clone that has the tag
#   KUBE_GIT_REMOTE=<url>            a reachable git remote (shallow clone of the tag)
#   (default)                        assembled from the Go module proxy: the main module
#                                    plus every staging module, which works offline here
#
# Idempotent: when the tree already holds the tag, nothing happens.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/upstream.sh"

need_base_tools
TAG=$(git_tag) || die "${PATCH_DIR#"$DRAEXT_ROOT"/}/GIT_TAG is not valid (see above)" "fix it to name a release such as v1.33.13"
STAGING_VERSION=$(series_tool staging-version "$TAG")

if [[ -e $KUBE_TREE ]]; then
	if tree_has_base; then
		info "upstream $TAG already in ${KUBE_TREE#"$DRAEXT_ROOT"/} (nothing to fetch)"
		exit 0
	fi
	die "${KUBE_TREE#"$DRAEXT_ROOT"/} exists but does not hold tag $TAG" \
		"it may be from another GIT_TAG or half-made; nothing was changed." \
		"Move it aside (mv $KUBE_TREE $KUBE_TREE.old) or remove it (make clean-upstream), then retry."
fi

mkdir -p "${KUBE_TREE%/*}"
partial=$KUBE_TREE.partial
rm -rf "$partial"
trap 'rm -rf "$partial"' EXIT
start=$(now_s)

if [[ -n $KUBE_SRC || -n $KUBE_GIT_REMOTE ]]; then
	src=${KUBE_SRC:-$KUBE_GIT_REMOTE}
	log "cloning $TAG from $src"
	depth=()
	[[ -n $KUBE_SRC ]] || depth=(--depth 1)
	if [[ -n $KUBE_SRC ]]; then
		git -C "$KUBE_SRC" rev-parse -q --verify "refs/tags/$TAG^{commit}" >/dev/null ||
			die "KUBE_SRC=$KUBE_SRC has no tag $TAG" "fetch it there (git -C $KUBE_SRC fetch origin tag $TAG) or fix GIT_TAG"
	fi
	git -c advice.detachedHead=false clone --quiet "${depth[@]}" --branch "$TAG" --single-branch "$src" "$partial" ||
		die "could not clone tag $TAG from $src" "check the path/URL and that the tag exists, or unset KUBE_SRC/KUBE_GIT_REMOTE to use the module proxy"
	git -C "$partial" rev-parse -q --verify "refs/tags/$TAG" >/dev/null || git -C "$partial" tag "$TAG" HEAD
	echo "git $src" >"$partial/.git/draext-source"
else
	log "assembling upstream $TAG from the Go module proxy (staging modules at $STAGING_VERSION)"
	assemble_from_proxy "$TAG" "$STAGING_VERSION" "$partial"
fi

[[ -d $partial/.git ]] || commit_assembled "$partial" "$TAG"

mv "$partial" "$KUBE_TREE"
trap - EXIT
log "upstream $TAG ready in ${KUBE_TREE#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s, source: $(cat "$KUBE_TREE/.git/draext-source"))"
