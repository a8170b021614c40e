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

mkdir -p "$OUTPUT_DIR"
partial=$KUBE_TREE.partial
rm -rf "$partial"
trap 'rm -rf "$partial"' EXIT
start=$(now_s)

# Fixed identity and date: the same base commit every time on the same source.
export GIT_AUTHOR_NAME=draext GIT_AUTHOR_EMAIL=draext@localhost
export GIT_COMMITTER_NAME=draext GIT_COMMITTER_EMAIL=draext@localhost
export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"

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
	dl=$(mktemp -d)
	trap 'rm -rf "$partial" "$dl"' EXIT
	# go mod download needs a directory outside any module or workspace.
	download() { (cd "$dl" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$@"); }

	if ! main_json=$(download "k8s.io/kubernetes@$TAG" 2>&1); then
		die "the Go module proxy has no k8s.io/kubernetes@$TAG" \
			"$(grep -m1 '"Error"' <<<"$main_json" | sed 's/^[[:space:]]*//')" \
			"Is GIT_TAG ($PATCH_DIR/GIT_TAG) a released Kubernetes version? Is the proxy reachable (GOPROXY=$(go env GOPROXY))?"
	fi
	main_dir=$(go_mod_json_dir "$main_json" k8s.io/kubernetes)
	[[ -d $main_dir ]] || die "go mod download gave no directory for k8s.io/kubernetes@$TAG"
	cp -r "$main_dir" "$partial"
	chmod -R u+w "$partial"

	# Every staging module named in the main go.mod replace block.
	mapfile -t staging < <(awk '/^replace \(/ {r=1; next} r && /^\)/ {r=0} r && $3 ~ /^\.\/staging\/src\// {print $1}' "$partial/go.mod")
	[[ ${#staging[@]} -gt 0 ]] || die "found no staging modules in the replace block of k8s.io/kubernetes@$TAG go.mod"
	args=()
	for m in "${staging[@]}"; do args+=("$m@$STAGING_VERSION"); done
	staging_json=$(download "${args[@]}" 2>/dev/null) || true
	missing=()
	for m in "${staging[@]}"; do
		dst=$partial/staging/src/$m
		dir=$(go_mod_json_dir "$staging_json" "$m")
		if [[ -n $dir && -d $dir ]]; then
			mkdir -p "$(dirname "$dst")"
			cp -r "$dir" "$dst"
		elif [[ $m == k8s.io/sample-* ]]; then
			# Upstream does not publish the sample modules at every version; a
			# module stub keeps go.work valid, and nothing we build imports them.
			mkdir -p "$dst"
			printf 'module %s\n' "$m" >"$dst/go.mod"
			missing+=("$m")
		else
			die "the Go module proxy has no $m@$STAGING_VERSION" "every staging module of $TAG must be served; check GOPROXY ($(go env GOPROXY))"
		fi
	done
	chmod -R u+w "$partial/staging"
	[[ ${#missing[@]} -eq 0 ]] || info "not published at $STAGING_VERSION, stubbed: ${missing[*]}"

	# What module zips leave out: exec bits and symlinks.
	info "$(series_tool fix-exec-bits "$partial")"
	if [[ -f $partial/build/root/Makefile && ! -e $partial/Makefile ]]; then
		ln -s build/root/Makefile "$partial/Makefile"
	fi
	echo "proxy k8s.io/kubernetes@$TAG" >"$partial/.git-source-pending"
fi

if [[ ! -d $partial/.git ]]; then
	info "committing the base tree and tagging it $TAG"
	git -C "$partial" init --quiet --initial-branch=upstream
	git -C "$partial" config core.autocrlf false
	# Take the files exactly as they are: no line-ending normalisation from the
	# tree's .gitattributes (module zips keep upstream's CRLF testdata as is).
	echo '* -text' >"$partial/.git/info/attributes"
	mv "$partial/.git-source-pending" "$partial/.git/draext-source"
	# -f: everything in the module is upstream content, even paths upstream's
	# .gitignore names (git tracks those upstream too).
	git -C "$partial" add -A -f .
	git -C "$partial" commit --quiet --no-verify -m "Kubernetes $TAG (assembled from the Go module proxy)"
	git -C "$partial" tag "$TAG"
fi

mv "$partial" "$KUBE_TREE"
trap - EXIT
[[ -z ${dl:-} ]] || rm -rf "$dl"
log "upstream $TAG ready in ${KUBE_TREE#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s, source: $(cat "$KUBE_TREE/.git/draext-source"))"
