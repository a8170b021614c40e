#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds Kubernetes binaries from the patched tree into _output/bin, one at a
# time, stamped v<GIT_TAG>-draext.<RELEASE> through the usual version ldflags.
#
#   WHAT="kubelet kubectl"   build a subset (default: the six binaries below)
#
# Incremental: a binary whose inputs (tree commit, uncommitted changes and
# untracked files, version, Go version, flags) did not change since its last
# build is skipped.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

ALL=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl kubeadm)
# Statically linked like upstream's release binaries; the kubelet keeps cgo.
STATIC=" kube-apiserver kube-controller-manager kube-scheduler kubectl kubeadm "
read -r -a what <<<"${WHAT:-${ALL[*]}}"
for w in "${what[@]}"; do
	[[ $w =~ ^[a-z0-9-]+$ ]] || die "WHAT: '$w' is not a binary name" "use names such as ${ALL[*]}"
done

# A tree the user is hacking on (extra commits on draext) is built as it is;
# otherwise make sure it carries the committed series.
"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
for w in "${what[@]}"; do
	[[ -d $KUBE_TREE/cmd/$w ]] || die "WHAT: there is no cmd/$w in the Kubernetes tree" "use names such as ${ALL[*]}"
done

VERSION=$(draext_version)
TAG=$(git_tag)
major=${TAG#v}; major=${major%%.*}
minor=${TAG#v*.}; minor=${minor%%.*}
commit=$(git -C "$KUBE_TREE" rev-parse HEAD)
dirty=$(git -C "$KUBE_TREE" status --porcelain --untracked-files=no)
state=clean
[[ -z $dirty ]] || state=dirty
# Reproducible: the build date is the commit date of the tree's HEAD.
build_date=$(TZ=UTC git -C "$KUBE_TREE" log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)

ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X '$pkg.gitVersion=$VERSION' -X '$pkg.gitMajor=$major' -X '$pkg.gitMinor=$minor'"
	ldflags+=" -X '$pkg.gitCommit=$commit' -X '$pkg.gitTreeState=$state' -X '$pkg.buildDate=$build_date'"
done
tags=selinux,notest

# What the binaries are built from: HEAD and the flags, the uncommitted diff,
# and the untracked files (a new .go file is compiled with its package).
inputs=$(tree_inputs "$KUBE_TREE" "$commit $VERSION $(go version) $ldflags $tags")

mkdir -p "$BIN_DIR"
total_start=$(now_s)
n=0
for w in "${what[@]}"; do
	n=$((n + 1))
	out=$BIN_DIR/$w
	stamp=$BIN_DIR/.$w.inputs
	if [[ -x $out && -f $stamp && $(cat "$stamp") == "$inputs" ]]; then
		log "[$n/${#what[@]}] $w is up to date ($VERSION)"
		continue
	fi
	cgo=1
	[[ $STATIC == *" $w "* ]] && cgo=0
	log "[$n/${#what[@]}] building $w ($VERSION, CGO_ENABLED=$cgo)"
	start=$(now_s)
	rm -f "$stamp"
	(cd "$KUBE_TREE" && CGO_ENABLED=$cgo go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out.tmp" "./cmd/$w") ||
		die "building $w failed (see the go errors above)" "the tree is $KUBE_TREE (branch $(git -C "$KUBE_TREE" branch --show-current))"
	mv "$out.tmp" "$out"
	echo "$inputs" >"$stamp"
	info "$w built in $(($(now_s) - start))s"
done
log "binaries in ${BIN_DIR#"$DRAEXT_ROOT"/} ($(($(now_s) - total_start))s): ${what[*]}"

# The gate must reach every server component we built.
servers=()
for w in "${what[@]}"; do
	case $w in kube-apiserver | kube-controller-manager | kube-scheduler | kubelet) servers+=("$BIN_DIR/$w") ;; esac
done
[[ ${#servers[@]} -eq 0 ]] || "$DRAEXT_ROOT/scripts/build/check-gates.sh" "${servers[@]}"
