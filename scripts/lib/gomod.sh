# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Go module proxy helpers: where a module version lives in the module cache.
# Source it; do not run it.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

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

# go_tool NAME MODULE/PATH VERSION: the path of a Go tool built at VERSION
# into _output/tools/NAME-VERSION (once; the module proxy is enough).
go_tool() {
	local name=$1 pkg=$2 version=$3 dir
	dir=$TOOLS_DIR/$name-$version
	if [[ ! -x $dir/$name ]]; then
		info "building $name $version"
		mkdir -p "$dir"
		(cd "$dir" && GOWORK=off GOFLAGS='' GOBIN="$dir" go install "$pkg@$version") >&2 ||
			die "could not build $pkg@$version (see the go error above)"
	fi
	echo "$dir/$name"
}

# golangci_lint MODULE [WRAPPER...]: the pinned golangci-lint with
# .golangci.yml on the Go module in directory MODULE (relative to the
# repository), run through WRAPPER (a command that sets go's environment,
# such as staging_env; default: GOWORK=off); one ERROR line naming the module
# when it finds problems.
golangci_lint() {
	local mod=$1 lint
	shift
	(($#)) || set -- env GOWORK=off
	lint=$(go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$GOLANGCI_LINT_VERSION")
	(cd "$DRAEXT_ROOT/$mod" && "$@" "$lint" run --config "$DRAEXT_ROOT/.golangci.yml" ./...) ||
		die "golangci-lint found problems in module $mod (see above)"
}
