# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Settings for the exported staging modules (scripts/build/staging.sh) and for the Go
# code that builds against them. Source it; do not run it.
# shellcheck disable=SC2034 # the settings are for the scripts that source this file
source "$(dirname "${BASH_SOURCE[0]}")/series.sh"

STAGING_DIR=$OUTPUT_DIR/staging
STAGING_PROXY=$STAGING_DIR/proxy
STAGING_SUMS=$STAGING_DIR/go.sum
# The modules users ask for; the staging modules they require come along.
STAGING_ROOTS=(k8s.io/api k8s.io/apimachinery k8s.io/client-go k8s.io/dynamic-resource-allocation)
# Modules of this repository that build against the export.
STAGING_CONSUMERS=(e2e staging/example compat/draextside)

# staging_module_version: v0.33.13-draext.<N>.
staging_module_version() {
	local base
	base=$(series_tool staging-version "$(git_tag)")
	echo "$base-draext.$(tr -d '[:space:]' <"$PATCH_DIR/RELEASE")"
}

# purge_cached_draext: removes the draext versions of the staging modules
# from the Go module cache. The version stays v0.33.13-draext.N while the
# series changes a module, and go would take an earlier export of it from the
# cache instead of the proxy.
purge_cached_draext() {
	local cache dir
	cache=$(go env GOMODCACHE)
	for dir in "$cache/k8s.io" "$cache/cache/download/k8s.io"; do
		[[ -d $dir ]] || continue
		find "$dir" -maxdepth 3 -name '*-draext.*' -prune -exec chmod -R u+w {} + -exec rm -rf {} +
	done
}

# staging_go ARGS...: go with the exported modules reachable: the file proxy
# first (go falls through to the next proxy for anything it does not have),
# and the checksum database not asked about the exported module paths
# (go.sum still pins their hashes).
staging_go() {
	staging_env go "$@"
}

# staging_env COMMAND ARGS...: COMMAND with the Go environment of staging_go,
# for tools that run go themselves (golangci-lint). go's module index
# (GOCACHE) is keyed by a module's directory in the module cache, not its
# content: after a new export under the same version it would still list an
# earlier export's packages ("no required module provides package
# k8s.io/api/resource/v1"), so it is off (GODEBUG=goindex=0).
staging_env() {
	local nosumdb
	nosumdb=$(find "$STAGING_PROXY" -path '*/@v/list' | sed "s|^$STAGING_PROXY/||; s|/@v/list$||" | sort | paste -sd, -)
	GOWORK=off GOPROXY="file://$STAGING_PROXY,$(go env GOPROXY)" GONOSUMDB="$nosumdb${GONOSUMDB:+,$GONOSUMDB}" \
		GODEBUG="goindex=0${GODEBUG:+,$GODEBUG}" "$@"
}
