#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Exports the patched k8s.io staging modules as Go module versions
# v0.33.13-draext.<N> (N from patches/<release>/RELEASE) into a file-based
# module proxy, so that Go code can use the API fields the series adds, typed:
#
#   _output/staging/proxy    GOPROXY=file://<that dir>,<your usual proxy>
#   _output/staging/go.sum   the go.sum lines of the exported versions
#
# The modules are k8s.io/api, k8s.io/apimachinery, k8s.io/client-go,
# k8s.io/dynamic-resource-allocation and every staging module they require.
# They come from the committed branch draext (git archive), so the same series
# gives byte-identical zips. A current export is not redone.
#
#   staging.sh           export when stale, then check the consumers' go.mod and go.sum
#   staging.sh --sums    also rewrite the draext lines of the consumers' go.sum
#   staging.sh --verify  also export a second time elsewhere and require identical bytes
#
# Consumers in this repository (they pin the versions with replace directives,
# see staging/README.md): e2e/ and staging/example/.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/staging.sh"

update_sums=false verify=false
case ${1:-} in
"") ;;
--sums) update_sums=true ;;
--verify) verify=true ;;
*) die "staging.sh: unknown argument '$1'" "use no argument, --sums or --verify" ;;
esac

"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
version=$(staging_module_version)
# The commit, not only its tree: the .info files carry the commit's author date.
commit=$(git -C "$KUBE_TREE" rev-parse "refs/heads/$PATCH_BRANCH^{commit}")
tool_sum=$(cd "$DRAEXT_ROOT" && cat go.mod cmd/draext-staging/*.go internal/tooling/staging/*.go | sha256sum | cut -d' ' -f1)
want_stamp="$version $commit $tool_sum ${STAGING_ROOTS[*]}"

# export_to PROXY SUMS: export the modules of the committed series.
export_to() {
	local bin=$TOOLS_DIR/draext-staging src stamp_time
	(cd "$DRAEXT_ROOT" && GOWORK=off go build -o "$bin" ./cmd/draext-staging)
	src=$(mktemp -d "${TMPDIR:-/tmp}/draext-staging.XXXXXX")
	git -C "$KUBE_TREE" archive --format=tar "refs/heads/$PATCH_BRANCH" staging/src/k8s.io | tar -x -C "$src"
	# The .info time is the author date of the series' last patch: fixed by the series.
	stamp_time=$(git -C "$KUBE_TREE" log -1 --format=%aI "refs/heads/$PATCH_BRANCH")
	"$bin" export -out "$1" -version "$version" -time "$stamp_time" -sums "$2" \
		"$src/staging/src" "${STAGING_ROOTS[@]}" | sed 's/^/    /' >&2 || { rm -rf "$src"; return 1; }
	rm -rf "$src"
}

if [[ -f $STAGING_DIR/stamp && $(cat "$STAGING_DIR/stamp") == "$want_stamp" && -s $STAGING_SUMS ]]; then
	info "staging modules $version are current in ${STAGING_PROXY#"$DRAEXT_ROOT"/}"
else
	log "exporting the patched staging modules as $version"
	start=$(now_s)
	rm -rf "$STAGING_DIR"
	mkdir -p "$STAGING_DIR"
	export_to "$STAGING_PROXY" "$STAGING_SUMS"
	echo "$want_stamp" >"$STAGING_DIR/stamp"
	log "staging modules exported to ${STAGING_PROXY#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s)"
fi

if $verify; then
	again=$(mktemp -d "${TMPDIR:-/tmp}/draext-staging-again.XXXXXX")
	out=$(export_to "$again/proxy" "$again/go.sum" 2>&1) || die "the second export failed:" "$out"
	diff -r "$STAGING_PROXY" "$again/proxy" >/dev/null && cmp -s "$STAGING_SUMS" "$again/go.sum" ||
		die "a second export of the same series differs from ${STAGING_PROXY#"$DRAEXT_ROOT"/}" "kept for comparison: $again"
	rm -rf "$again"
	info "a second export gives byte-identical module files"
fi

# Each consumer pins this version and its go.sum holds exactly the hashes
# this series gives.
for consumer in "${STAGING_CONSUMERS[@]}"; do
	other=$(grep -- "=> k8s.io/.* v[0-9.]*-draext\." "$DRAEXT_ROOT/$consumer/go.mod" | grep -v -- " $version\$" || true)
	[[ -z $other ]] || die "$consumer/go.mod pins other draext versions than $version:" "$other" \
		"replace them by $version (see staging/README.md), then run make staging-sums"
	sum_file=$DRAEXT_ROOT/$consumer/go.sum
	[[ -f $sum_file ]] || die "$consumer/go.sum is missing" "run make staging-sums"
	if $update_sums; then
		purge_cached_draext
		# Drop the old draext lines, let go add the current ones.
		grep -v -- "-draext\.[0-9]*[ /]" "$sum_file" >"$sum_file.tmp" || true
		mv "$sum_file.tmp" "$sum_file"
		(cd "$DRAEXT_ROOT/$consumer" && staging_go mod tidy)
		info "$consumer/go.sum: draext lines rewritten"
	fi
	stale=$(grep -- " ${version}[ /]" "$sum_file" | grep -vxF -f "$STAGING_SUMS" || true)
	[[ -z $stale ]] || die "$consumer/go.sum has hashes for $version that this series does not give:" "$stale" \
		"run make staging-sums and commit $consumer/go.sum"
	old=$(grep -- "-draext\.[0-9]*[ /]" "$sum_file" | grep -v -- " ${version}[ /]" || true)
	[[ -z $old ]] || die "$consumer/go.sum has lines of other draext versions:" "$old" \
		"run make staging-sums and commit $consumer/go.sum"
done
info "go.sum of ${STAGING_CONSUMERS[*]} matches the exported modules"
