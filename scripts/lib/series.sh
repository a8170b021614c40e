# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# The patch series and the upstream tree it applies to: the draext-series
# helper, the pinned tag, patch files, worktrees, git am, normalised export.
# Source it; do not run it.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# git_isolated ARGS...: git without the user's or system's config, so that
# exported patches do not depend on someone's format.*, diff.* or am.* settings.
git_isolated() {
	GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git \
		-c core.autocrlf=false -c core.quotepath=true \
		-c user.name="${GIT_COMMITTER_NAME:-draext}" -c user.email="${GIT_COMMITTER_EMAIL:-draext@localhost}" \
		"$@"
}

# series_tool ARGS...: run the draext-series helper, building it when its source changed.
series_tool() {
	local bin=$TOOLS_DIR/draext-series
	local stamp=$TOOLS_DIR/draext-series.stamp
	local sum
	# Every package of the tooling, not only those it imports today: a new
	# import cannot leave a stale helper behind.
	sum=$(cd "$DRAEXT_ROOT" && find cmd/draext-series internal/tooling -name '*.go' -print0 | sort -z |
		xargs -0 cat go.mod | sha256sum | cut -d' ' -f1)
	if [[ ! -x $bin || ! -f $stamp || $(cat "$stamp") != "$sum" ]]; then
		mkdir -p "$TOOLS_DIR"
		(cd "$DRAEXT_ROOT" && GOWORK=off go build -o "$bin" ./cmd/draext-series) ||
			die "could not build the draext-series helper (see the go error above)"
		echo "$sum" >"$stamp"
	fi
	"$bin" "$@"
}

git_tag() { series_tool version "$PATCH_DIR" >/dev/null && tr -d '[:space:]' <"$PATCH_DIR/GIT_TAG"; }
draext_version() { series_tool version "$PATCH_DIR"; }

# series_files: the patch files in series order, as absolute paths.
series_files() {
	local name
	while IFS= read -r name || [[ -n $name ]]; do
		name=${name%%#*}
		name=$(echo "$name" | tr -d '[:space:]')
		[[ -n $name ]] && echo "$PATCH_DIR/$name"
	done <"$PATCH_DIR/series"
}

# series_hash: identifies the committed series, to tell whether a tree has it applied.
series_hash() {
	{
		cat "$PATCH_DIR/GIT_TAG" "$PATCH_DIR/series"
		local f
		for f in $(series_files); do cat "$f"; done
	} | sha256sum | cut -d' ' -f1
}

# tree_has_base: the upstream tree exists and holds the pinned base tag.
tree_has_base() {
	[[ -d $KUBE_TREE/.git ]] && git -C "$KUBE_TREE" rev-parse -q --verify "refs/tags/$(git_tag)^{commit}" >/dev/null
}

# tree_dirty: prints the uncommitted changes to tracked files of the upstream tree.
tree_dirty() {
	git -C "$KUBE_TREE" status --porcelain --untracked-files=no
}

# tree_untracked TREE: one line per untracked file of the git work tree TREE
# that .gitignore does not exclude, with its content hash (a symlink: its
# target), in path order. Test files (*_test.go) are left out: no binary
# compiles them.
tree_untracked() {
	local p f
	git -C "$1" ls-files -z --others --exclude-standard -- . ':(exclude,glob)**/*_test.go' | sort -z |
		while IFS= read -r -d '' p; do
			f=$1/$p
			if [[ -L $f ]]; then
				printf 'link %q %q\n' "$p" "$(readlink "$f")"
			elif [[ -f $f ]]; then
				printf 'file %q %s\n' "$p" "$(sha256sum <"$f" | cut -d' ' -f1)"
			fi
		done
}

# tree_inputs TREE LINE: a hash of LINE and of what a build of the git work
# tree TREE compiles besides its HEAD commit: the uncommitted changes to
# tracked files (git diff HEAD) and the untracked files (tree_untracked), so
# that a new .go file changes it too. A tree without either gives the hash of
# LINE alone.
tree_inputs() {
	local tree=$1 sum
	sum=$({
		printf '%s\n' "$2" &&
			git -C "$tree" diff HEAD &&
			tree_untracked "$tree"
	} | sha256sum) || die "could not read the uncommitted and untracked files of the git tree $tree (see the git error above)"
	echo "${sum%% *}"
}

# am_error OUTPUT: the lines of a failed git am that say what went wrong.
am_error() {
	grep -E '^(error|fatal|warning): |^Patch failed|^CONFLICT|does not apply|patch failed' <<<"$1" | grep -v '^hint:' | head -6 || true
}

# remove_worktree DIR: drop a worktree of the upstream tree (and its directory).
remove_worktree() {
	git -C "$KUBE_TREE" worktree remove --force "$1" >/dev/null 2>&1 || rm -rf "$1"
	git -C "$KUBE_TREE" worktree prune >/dev/null 2>&1 || true
}

# fresh_worktree DIR REF: a new detached worktree of the upstream tree at REF,
# replacing whatever was at DIR. The user's own work tree is never touched.
fresh_worktree() {
	remove_worktree "$1"
	git -C "$KUBE_TREE" worktree add --quiet --detach "$1" "$2"
}

# apply_patch TREE PATCH: git am -3 one patch of the series, without the
# user's git config; on failure it aborts the am and prints why.
apply_patch() {
	local out
	if ! out=$(git_isolated -C "$1" am --quiet -3 --keep-cr "$2" 2>&1); then
		git -C "$1" am --abort >/dev/null 2>&1 || true
		am_error "$out"
		return 1
	fi
}

# export_series TREE RANGE OUTDIR [STEP]: the one definition of a normalised series.
# make patches-export and patches-verify both use it, so they produce
# identical bytes by construction; make clean compares a tree's branch with it.
# File numbers are stable: a patch keeps the number of the committed patch
# with its subject (patches/<release>), a new one takes the next free number
# (draext-series number); STEP numbers the whole series STEP, 2*STEP, ...
# instead (make patches-export RENUMBER=STEP).
export_series() {
	local tree=$1 range=$2 out=$3 step=${4:-}
	local renumber=()
	[[ -z $step ]] || renumber=(-renumber "$step")
	mkdir -p "$out"
	git_isolated -C "$tree" format-patch --quiet \
		--zero-commit --no-signature --full-index --no-numbered --subject-prefix=PATCH \
		--no-cover-letter --no-thread --no-signoff --no-notes --find-renames \
		--filename-max-length=64 --start-number=1 \
		-o "$out" "$range" >/dev/null
	series_tool number "${renumber[@]}" "$PATCH_DIR" "$out"
}
