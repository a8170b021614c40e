#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds Kubernetes binaries from the patched tree into _output/bin (one go
# build for the static ones, one for the kubelet), stamped
# v<GIT_TAG>-draext.<RELEASE> through the usual version ldflags.
#
#   WHAT="kubelet kubectl"   build a subset (default: the six binaries below)
#   BASE=1                   make build-base: the unpatched base instead, from a
#                            worktree at the tag (BASE_TREE) into BASE_BIN_DIR,
#                            version v<GIT_TAG>, checked to reject the gate
#   UPSTREAM=v1.34.4         make build-upstream: a stock release of any minor,
#                            assembled from the Go module proxy into
#                            UPSTREAM_DIR/<version>/kubernetes, built into
#                            UPSTREAM_DIR/<version>/bin; from 1.34 the binaries
#                            must accept the gate (upstream has it), before
#                            that refuse it
#
# Incremental: a binary whose inputs (tree commit, uncommitted changes and
# untracked files, version, Go version, flags) did not change since its last
# build is skipped.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/upstream.sh"

ALL=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kubeadm)
# Statically linked like upstream's release binaries; the kubelet keeps cgo.
STATIC=" kube-apiserver kube-controller-manager kube-scheduler kubectl kubeadm "
read -r -a what <<<"${WHAT:-${ALL[*]}}"
for w in "${what[@]}"; do
	[[ $w =~ ^[a-z0-9-]+$ ]] || die "WHAT: '$w' is not a binary name" "use names such as ${ALL[*]}"
done

TAG=$(git_tag)
if [[ -n $UPSTREAM ]]; then
	# make build-upstream: a stock release of any minor, assembled from the Go
	# module proxy into a tree of its own (never the series' tree).
	[[ $UPSTREAM =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || die "VERSION=$UPSTREAM is not a Kubernetes release" "use a version such as v1.34.4"
	upstream_minor=${BASH_REMATCH[1]}
	TAG=$UPSTREAM
	TREE_DIR=$UPSTREAM_DIR/$UPSTREAM/kubernetes
	if ! git -C "$TREE_DIR" rev-parse -q --verify "refs/tags/$UPSTREAM" >/dev/null 2>&1; then
		need_base_tools
		rm -rf "$TREE_DIR" "$TREE_DIR.partial"
		mkdir -p "${TREE_DIR%/*}"
		log "assembling upstream $UPSTREAM from the Go module proxy"
		assemble_from_proxy "$UPSTREAM" "$(series_tool staging-version "$UPSTREAM")" "$TREE_DIR.partial"
		commit_assembled "$TREE_DIR.partial" "$UPSTREAM"
		mv "$TREE_DIR.partial" "$TREE_DIR"
	elif [[ -n $(git -C "$TREE_DIR" status --porcelain) ]]; then
		die "${TREE_DIR#"$DRAEXT_ROOT"/} has changes: a stock build is built from the release as published" \
			"remove the tree (rm -rf $TREE_DIR) and run make build-upstream VERSION=$UPSTREAM again"
	fi
	want_go=$(awk '$1 == "go" { print $2; exit }' "$TREE_DIR/go.mod")
	if ! printf '%s\n%s\n' "$want_go" "$(go env GOVERSION | sed 's/^go//')" | sort -C -V; then
		die "$UPSTREAM needs Go $want_go (its go.mod), this machine has $(go env GOVERSION)" "install a newer Go, or build an older release"
	fi
	OUT_DIR=$UPSTREAM_DIR/$UPSTREAM/bin VERSION=$UPSTREAM
	# DRAExtendedResource exists from 1.34 (alpha), locked to true from 1.37.
	EXPECT=rejected
	[[ $upstream_minor -lt 34 ]] || EXPECT=accepted
elif [[ $BASE == 1 ]]; then
	# The pristine tag of the upstream tree, in a worktree of its own, so that
	# the patched tree and its branch are never touched.
	"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
	tag_commit=$(git -C "$KUBE_TREE" rev-parse "$TAG^{commit}") || die "the upstream tree has no tag $TAG" "make fetch"
	# The base tree is generated: made again whenever it is not the clean tag.
	if [[ $(git -C "$BASE_TREE" rev-parse HEAD 2>/dev/null) != "$tag_commit" || -n $(git -C "$BASE_TREE" status --porcelain 2>/dev/null) ]]; then
		info "worktree of $TAG at ${BASE_TREE#"$DRAEXT_ROOT"/}"
		fresh_worktree "$BASE_TREE" "$TAG" || die "could not add a worktree of $TAG at $BASE_TREE (see the git error above)"
	fi
	TREE_DIR=$BASE_TREE OUT_DIR=$BASE_BIN_DIR VERSION=$TAG EXPECT=rejected
else
	# A tree the user is hacking on (extra commits on draext) is built as it is;
	# otherwise make sure it carries the committed series.
	"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
	TREE_DIR=$KUBE_TREE OUT_DIR=$BIN_DIR VERSION=$(draext_version) EXPECT=accepted
fi
export EXPECT
for w in "${what[@]}"; do
	[[ -d $TREE_DIR/cmd/$w ]] || die "WHAT: there is no cmd/$w in the Kubernetes tree" "use names such as ${ALL[*]}"
done

major=${TAG#v}; major=${major%%.*}
minor=${TAG#v*.}; minor=${minor%%.*}
commit=$(git -C "$TREE_DIR" rev-parse HEAD)
dirty=$(git -C "$TREE_DIR" status --porcelain --untracked-files=no)
state=clean
[[ -z $dirty ]] || state=dirty
# Reproducible: the build date is the commit date of the tree's HEAD.
build_date=$(TZ=UTC git -C "$TREE_DIR" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)

ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X '$pkg.gitVersion=$VERSION' -X '$pkg.gitMajor=$major' -X '$pkg.gitMinor=$minor'"
	ldflags+=" -X '$pkg.gitCommit=$commit' -X '$pkg.gitTreeState=$state' -X '$pkg.buildDate=$build_date'"
done
tags=selinux,notest

# What the binaries are built from: HEAD and the flags, the uncommitted diff,
# and the untracked files (a new .go file is compiled with its package).
inputs=$(tree_inputs "$TREE_DIR" "$commit $VERSION $(go version) $ldflags $tags")

mkdir -p "$OUT_DIR"
check_disk_space 8 "make build" "$(go env GOCACHE)" "$OUTPUT_DIR"
total_start=$(now_s)
# What is stale, in two groups by CGO_ENABLED. A group is one `go build`: on a
# cold cache its packages compile once for all its binaries, and the links
# run in parallel (four static binaries relink in 8 s instead of 19 s here).
static=() dynamic=()
for w in "${what[@]}"; do
	out=$OUT_DIR/$w
	if [[ -x $out && -f $OUT_DIR/.$w.inputs && $(cat "$OUT_DIR/.$w.inputs") == "$inputs" ]]; then
		log "$w is up to date ($VERSION)"
		continue
	fi
	rm -f "$OUT_DIR/.$w.inputs"
	if [[ $STATIC == *" $w "* ]]; then static+=("$w"); else dynamic+=("$w"); fi
done
# build_group CGO BINARY...: one go build of BINARY... into a scratch folder,
# then each binary moved into place with its stamp.
build_group() {
	local cgo=$1 start w pkgs=() tmp
	shift
	(($#)) || return 0
	for w in "$@"; do pkgs+=("./cmd/$w"); done
	log "building $* ($VERSION, CGO_ENABLED=$cgo)"
	start=$(now_s)
	tmp=$(mktemp -d "$OUT_DIR/.build.XXXXXX")
	(cd "$TREE_DIR" && CGO_ENABLED=$cgo go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}") || {
		rm -rf "$tmp"
		die "building $* failed (see the go errors above)" "the tree is $TREE_DIR ($(git -C "$TREE_DIR" describe --all 2>/dev/null))"
	}
	for w in "$@"; do
		mv "$tmp/$w" "$OUT_DIR/$w"
		echo "$inputs" >"$OUT_DIR/.$w.inputs"
	done
	rmdir "$tmp"
	info "$* built in $(($(now_s) - start))s"
}
build_group 0 "${static[@]}"
build_group 1 "${dynamic[@]}"
log "binaries in ${OUT_DIR#"$DRAEXT_ROOT"/} ($(($(now_s) - total_start))s): ${what[*]}"

# The gate must reach every patched server component we built, and be
# refused by every unpatched one.
servers=()
for w in "${what[@]}"; do
	case $w in kube-apiserver | kube-controller-manager | kube-scheduler | kubelet) servers+=("$OUT_DIR/$w") ;; esac
done
[[ ${#servers[@]} -eq 0 ]] || "$DRAEXT_ROOT/scripts/build/check-gates.sh" "${servers[@]}"
