# shellcheck shell=bash
# Common settings and helpers for the draext scripts. Source it; do not run it.

set -o errexit -o nounset -o pipefail

DRAEXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DRAEXT_ROOT
# shellcheck source=versions.sh
source "$DRAEXT_ROOT/scripts/versions.sh"

# Which release directory of patches/ we work on (patches/v1.33 by default).
RELEASE_BRANCH=${RELEASE_BRANCH:-v1.33}
PATCH_DIR=${PATCH_DIR:-$DRAEXT_ROOT/patches/$RELEASE_BRANCH}
OUTPUT_DIR=${OUTPUT_DIR:-$DRAEXT_ROOT/_output}
# The upstream tree: pristine base commit tagged GIT_TAG, series applied on branch draext.
KUBE_TREE=${KUBE_TREE:-$OUTPUT_DIR/kubernetes}
BIN_DIR=${BIN_DIR:-$OUTPUT_DIR/bin}
TOOLS_DIR=$OUTPUT_DIR/tools
PATCH_BRANCH=draext

# Never let Go fetch another toolchain behind our back, and keep builds
# independent of a VCS stamp (the trees we build are our own git repos).
export GOTOOLCHAIN=local
export LC_ALL=C
export GOFLAGS=${GOFLAGS:--buildvcs=false}

log() { printf '==> %s\n' "$*" >&2; }
info() { printf '    %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() {
	printf 'ERROR: %s\n' "$1" >&2
	shift
	local line
	for line in "$@"; do printf '       %s\n' "$line" >&2; done
	exit 1
}

# need_tool NAME HINT: stop with a clear message when a command is missing.
need_tool() {
	command -v "$1" >/dev/null 2>&1 || die "required tool '$1' is not installed" "$2"
}

need_base_tools() {
	need_tool git "install it: apt-get update && apt-get install -y git"
	need_tool go "install Go 1.24 or newer (https://go.dev/dl) and put it on PATH"
	need_tool make "install it: apt-get update && apt-get install -y make"
}

# now_s: seconds since the epoch, for durations.
now_s() { date +%s; }

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
	sum=$(cd "$DRAEXT_ROOT" && cat go.mod cmd/draext-series/*.go internal/series/*.go | sha256sum | cut -d' ' -f1)
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

# build_pause DIR TAG: DIR/pause, a static pause binary from the tree's
# build/pause/linux/pause.c that reports version TAG-draext (the pause images
# of the local cluster and of the kind node image).
build_pause() {
	local src=$KUBE_TREE/build/pause/linux/pause.c
	[[ -f $src ]] || bash "$DRAEXT_ROOT/scripts/fetch-upstream.sh"
	mkdir -p "$1"
	gcc -Os -static -o "$1/pause" "$src" -DVERSION="$2-draext" ||
		die "building pause $2 failed" "gcc and a static libc are needed: apt-get install -y gcc libc6-dev"
	strip "$1/pause" 2>/dev/null || true
}

# busybox_root DIR APPLET...: DIR/bin/busybox from Debian's busybox-static
# with a link for each applet (the busybox images of the local cluster and of
# kind's local-path helper).
busybox_root() {
	local dir=$1 applet
	shift
	[[ -x /bin/busybox ]] || die "/bin/busybox is missing" "install Debian's busybox-static: apt-get install -y busybox-static"
	mkdir -p "$dir/bin"
	cp /bin/busybox "$dir/bin/busybox"
	for applet in "$@"; do ln -sf busybox "$dir/bin/$applet"; done
}
