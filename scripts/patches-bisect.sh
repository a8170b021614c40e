#!/usr/bin/env bash
# Checks that the series is bisectable: applies the patches one by one on a
# fresh checkout of the base tag and, after each, type-checks (go vet, which
# also compiles the tests) every Go package the series has changed so far.
#
# An api: patch immediately followed by a gen: patch is checked together with
# it: new API types and their generated code form one build step (a manual
# conversion for a field an older version lacks collides with the old
# generated one until conversions are regenerated).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$DRAEXT_ROOT/scripts/fetch-upstream.sh"
TAG=$(git_tag)
wt=$OUTPUT_DIR/bisect
fresh_worktree "$wt" "refs/tags/$TAG^{commit}"
trap 'remove_worktree "$wt"' EXIT

mapfile -t patches < <(series_files)
area() { sed -n 's/^[0-9]\{4\}-\([a-z]*\)-.*/\1/p' <<<"$(basename "$1")"; }
start=$(now_s)
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	name=$(basename "$p")
	why=$(apply_patch "$wt" "$p") || die "patch $name does not apply:" "$why"
	next=${patches[$((i + 1))]:-}
	if [[ $(area "$p") == api && -n $next && $(area "$next") == gen ]]; then
		info "$name: checked together with $(basename "$next")"
		continue
	fi
	mapfile -t pkgs < <(git -C "$wt" diff --name-only --diff-filter=d "refs/tags/$TAG" HEAD | series_tool packages "$wt")
	[[ ${#pkgs[@]} -gt 0 ]] || { info "$name: no Go package changed"; continue; }
	t0=$(now_s)
	if ! out=$(cd "$wt" && go vet "${pkgs[@]}" 2>&1); then
		die "the series does not build after $name:" "$(grep -v '^#' <<<"$out" | head -15)"
	fi
	info "$name: ${#pkgs[@]} package(s) build and vet ($(($(now_s) - t0))s)"
done
log "patches-bisect: every step of the series builds ($(($(now_s) - start))s)"
