#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make verify: the static checks of draext's own code and of the series. Each
# failure stops with one ERROR line that names what to fix.
#
#   gofmt          every Go file of the repository's modules
#   headers        every Go and shell file, the Makefile and the Dockerfile
#                  start with the Apache-2.0 SPDX header (see LICENSE)
#   ShellCheck     scripts/, kind/ and .ci/ at severity warning, with Debian's
#                  ShellCheck $SHELLCHECK_VERSION (installed with apt when missing)
#   golangci-lint  the main module, compat/upstream and compat/stockdriver with .golangci.yml
#                  ($GOLANGCI_LINT_VERSION, built into _output/tools once);
#                  e2e/ and staging/example need the exported staging
#                  modules, so make test lints them after exporting them
#   logcheck       contextual and structured logging in the example driver
#                  (sigs.k8s.io/logtools $LOGCHECK_VERSION)
#   patches table  docs/patches.md has the table the series gives
#   patches-verify metadata, checksums, replay and byte-identical re-export
#   staging sums   the go.sum of e2e/, staging/example and compat/draextside
#                  hold exactly the hashes of the series' staging export (a
#                  patch that changes a staging module needs make staging-sums)
source "$(dirname "${BASH_SOURCE[0]}")/../lib/series.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"

need_base_tools
start=$(now_s)
cd "$DRAEXT_ROOT"

log "[verify] gofmt"
unformatted=$(gofmt -l cmd internal compat e2e staging)
[[ -z $unformatted ]] || die "these files are not gofmt-formatted:" "$unformatted" "run gofmt -w on them"

log "[verify] license headers"
# Tracked files and new ones not ignored yet: a file is checked before its commit.
missing=$(git ls-files --cached --others --exclude-standard -- '*.go' '*.sh' Makefile .ci/run kind/runc-capfilter images/draext-gpu/Dockerfile |
	grep -v '/testdata/' | while IFS= read -r f; do
		head -n 5 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || echo "$f"
	done)
[[ -z $missing ]] || die "these files lack the license header (Copyright ... The draext Authors. / SPDX-License-Identifier: Apache-2.0, in the first 5 lines):" "$missing"

log "[verify] shellcheck"
if ! command -v shellcheck >/dev/null; then
	[[ $(id -u) == 0 ]] || die "shellcheck is missing" "install it: apt-get update && apt-get install -y shellcheck"
	info "installing Debian's shellcheck"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck) >/dev/null ||
		die "could not install shellcheck with apt-get"
fi
have=$(shellcheck --version | sed -n 's/^version: //p')
[[ $have == "$SHELLCHECK_VERSION" ]] ||
	die "shellcheck $have is installed, the checks are pinned to $SHELLCHECK_VERSION (Debian bookworm's)" "install that one, or SHELLCHECK_VERSION=$have make verify"
mapfile -t shells < <(git ls-files -- 'scripts/*.sh' kind/runc-capfilter .ci/run)
shellcheck -x -P SCRIPTDIR -P scripts/lib -S warning "${shells[@]}" || die "shellcheck found problems (see above)"

log "[verify] golangci-lint"
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
golangci_lint .
golangci_lint compat/upstream
golangci_lint compat/stockdriver

log "[verify] logcheck"
logcheck=$(go_tool logcheck sigs.k8s.io/logtools/logcheck "$LOGCHECK_VERSION")
GOWORK=off "$logcheck" -check-contextual -check-structured ./cmd/draext-gpu/... ./internal/gpudriver/... ||
	die "logcheck: the example driver must log contextually (klog.FromContext, logger.Info with key/value pairs)"
(cd "$DRAEXT_ROOT/compat/stockdriver" && GOWORK=off "$logcheck" -check-contextual -check-structured ./...) ||
	die "logcheck: compat/stockdriver must log contextually (klog.FromContext, logger.Info with key/value pairs)"

log "[verify] patches table"
series_tool table-check "$PATCH_DIR" "$DRAEXT_ROOT/docs/patches.md" ||
	die "docs/patches.md does not match the series" "run make patches-export, which writes the table"

# The other series (the forward series on v1.37.2): their metadata and texts;
# replaying them needs their upstream tree (RELEASE_BRANCH=v1.37 make patches-verify).
for dir in "$DRAEXT_ROOT"/patches/v*; do
	[[ $dir == "$PATCH_DIR" ]] && continue
	log "[verify] lint of ${dir#"$DRAEXT_ROOT"/}"
	series_tool lint "$dir" || die "${dir#"$DRAEXT_ROOT"/} is not valid (see above)"
done

log "[verify] patches-verify"
"$DRAEXT_ROOT/scripts/series/patches-verify.sh"

log "[verify] staging go.sum"
"$DRAEXT_ROOT/scripts/build/staging.sh"

log "make verify: passed ($(($(now_s) - start)) s)"
