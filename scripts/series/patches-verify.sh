#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Proves the committed series is complete and deterministic:
#  1. metadata: series and files agree, names, subjects, trailers, release notes,
#     and the texts of the messages, TOPICS.md and the docs (draext-series lint);
#  2. replay: git am -3 every patch onto a fresh checkout of the pristine base tag;
#  3. gofmt of every Go file the series changes;
#  4. re-export with the same normalisation and compare byte for byte.
# The user's _output/kubernetes work tree is not touched (a separate worktree is used).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"

log "checking patch metadata, checksums and the texts of the series and the docs"
lint_ok=true
series_tool lint -docs "$DRAEXT_ROOT" "$PATCH_DIR" || lint_ok=false

"$DRAEXT_ROOT/scripts/series/fetch-upstream.sh"
TAG=$(git_tag)
start=$(now_s)

wt=$OUTPUT_DIR/verify
trap 'remove_worktree "$wt"; rm -rf "$wt.export"' EXIT
rm -rf "$wt.export"
fresh_worktree "$wt" "refs/tags/$TAG^{commit}"

mapfile -t patches < <(series_files)
log "replaying ${#patches[@]} patch(es) on a fresh checkout of $TAG"
for p in "${patches[@]}"; do
	[[ -f $p ]] || die "patch listed in series is missing: ${p#"$DRAEXT_ROOT"/}"
	why=$(apply_patch "$wt" "$p") || die "patch $(basename "$p") does not apply on a pristine $TAG:" "$why"
done

# Every patch, not only the tip: upstream's verify-gofmt checks each commit,
# and a fold or a tree filter can leave an intermediate tree unformatted.
log "gofmt of the Go files each patch changes"
unformatted=()
while read -r commit; do
	while IFS= read -r file; do
		[[ -z $(git -C "$wt" show "$commit:$file" | gofmt -l 2>&1) ]] ||
			unformatted+=("$(git -C "$wt" log -1 --format=%s "$commit"): $file")
	done < <(git -C "$wt" diff-tree --no-commit-id --name-only -r --diff-filter=d "$commit" -- '*.go')
done < <(git -C "$wt" rev-list --reverse "refs/tags/$TAG..HEAD")
[[ ${#unformatted[@]} -eq 0 ]] || die "these files are not gofmt-formatted after the patch named before them:" "${unformatted[@]}" \
	"run gofmt -w on them in that patch's commit on $PATCH_BRANCH of $KUBE_TREE (git rebase -i), then make patches-export"

log "re-exporting and comparing byte for byte"
export_series "$wt" "refs/tags/$TAG..HEAD" "$wt.export"
bad=()
if ! cmp -s "$PATCH_DIR/series" "$wt.export/series"; then
	bad+=("series (the order or names of the patches differ from what export writes)")
fi
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	name=$(basename "$p")
	if [[ ! -f $wt.export/$name ]]; then
		bad+=("$name (its commit re-exports as $(sed -n "${i}p" "$wt.export/series"): file name, subject or number changed)")
	elif ! cmp -s "$p" "$wt.export/$name"; then
		bad+=("$name differs from its re-export; first differing lines (< committed, > re-export):")
		bad+=("$( (diff "$p" "$wt.export/$name" || true) | head -8 | sed 's/^/    /')")
	fi
done
if [[ ${#bad[@]} -gt 0 ]]; then
	die "the committed series is not what replay + export produces:" "${bad[@]}" \
		"Regenerate it: make patches-apply && make patches-export (after fixing the patch by hand if it was edited)."
fi
$lint_ok || die "patches replay and re-export identically, but the metadata or text check above failed"
log "patches-verify: ${#patches[@]} patch(es) replay onto $TAG and re-export to identical bytes ($(($(now_s) - start))s)"
