# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Common settings and helpers for the draext scripts. Source it; do not run it.
# shellcheck disable=SC2034 # the settings are for the scripts that source this file

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
	need_tool go "install Go $GO_MIN_VERSION or newer (https://go.dev/dl) and put it on PATH"
	need_tool make "install it: apt-get update && apt-get install -y make"
}

# now_s: seconds since the epoch, for durations.
now_s() { date +%s; }

# send_signal SIG PID: kill -SIG PID for teardown. A process that has exited
# meanwhile is not an error (it raced us to the goal); one that is still there
# and cannot be signalled gets a warning, and teardown goes on.
send_signal() {
	kill -s "$1" "$2" 2>/dev/null && return 0
	[[ -n $2 && -e /proc/$2 ]] || return 0
	warn "could not send SIG$1 to pid $2"
}

# go_mod_json_dir JSON MODULE: the "Dir" of MODULE in `go mod download -json`
# output (one or more objects); nothing when it is missing or has an "Error".
# No jq: make fetch runs before make cluster-deps installs it.
go_mod_json_dir() {
	awk -v m="$2" '
		/^\{/ { path = ""; dir = ""; err = "" }
		/^\t"Path": / { path = $2; gsub(/[",]/, "", path) }
		/^\t"Dir": / { dir = $0; sub(/^\t"Dir": "/, "", dir); sub(/",?$/, "", dir) }
		/^\t"Error": / { err = 1 }
		/^\}/ { if (path == m && dir != "" && !err) print dir }
	' <<<"$1"
}

# module_dir MODULE VERSION: the directory of MODULE@VERSION in the module
# cache, downloaded from the Go module proxy when needed. Stops with one
# ERROR line naming module, version and the cause when that fails.
module_dir() {
	local mod=$1 version=$2 tmp json dir why rc=0
	tmp=$(mktemp -d)
	# Outside any module or workspace: nothing of ours is resolved or changed.
	json=$(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$mod@$version" 2>"$tmp/stderr") || rc=$?
	why=$(sed -n 's/^\t"Error": "\(.*\)",\{0,1\}$/\1/p' <<<"$json" | head -1)
	[[ -n $why ]] || why=$(grep -v '^[[:space:]]*$' "$tmp/stderr" | tail -1 || true)
	rm -rf "$tmp"
	if ((rc != 0)); then
		die "could not download $mod@$version from the Go module proxy: ${why:-go mod download exited with status $rc}" \
			"check the version and that the proxy is reachable (GOPROXY=$(go env GOPROXY))"
	fi
	dir=$(go_mod_json_dir "$json" "$mod")
	[[ -n $dir && -d $dir ]] || die "go mod download $mod@$version gave no module directory${why:+: $why}"
	echo "$dir"
}

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
	sum=$(cd "$DRAEXT_ROOT" && cat go.mod cmd/draext-series/*.go internal/tooling/series/*.go | sha256sum | cut -d' ' -f1)
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

# docker_build LOG TAG DOCKER-BUILD-ARGS...: docker build -t TAG (classic
# builder: no buildx offline), its output kept in LOG; when it fails, the last
# lines of LOG and one ERROR line naming TAG and LOG.
docker_build() {
	local log=$1 tag=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	if ! DOCKER_BUILDKIT=0 docker build -t "$tag" "$@" >"$log" 2>&1; then
		tail -n 15 "$log" | sed 's/^/    | /' >&2 || true
		die "docker build of $tag failed: $(grep -v '^[[:space:]]*$' "$log" | tail -1)" "log: ${log#"$DRAEXT_ROOT"/}"
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
