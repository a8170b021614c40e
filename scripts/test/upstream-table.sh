#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make upstream-table: writes the release columns of the README
# table "What works, against upstream" from the pages of make e2e-upstream
# (docs/e2e-upstream/v*.md). The rows are tied to specs by Ginkgo labels
# row:KEY; the labels come from a dry run of the e2e suite (no cluster), so a
# page written before a spec got its label still counts. --check fails
# instead of writing when the README is not current (make test step 7).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/staging.sh"

mode=()
[[ ${1:-} == --check ]] && mode=(-check)
mapfile -t pages < <(find "$DRAEXT_ROOT/docs/e2e-upstream" -name 'v*.md' | sort)
[[ ${#pages[@]} -gt 0 ]] || die "no page in docs/e2e-upstream" "run make e2e-upstream VERSION=... first"
out=$OUTPUT_DIR/upstream-table
mkdir -p "$out"
rm -f "$out/suite.json"
# The suite's specs and labels; the staging modules it builds on must be exported.
"$DRAEXT_ROOT/scripts/build/staging.sh"
(cd "$DRAEXT_ROOT/e2e" && staging_go test -count=1 . -args -ginkgo.dry-run -ginkgo.no-color \
	-ginkgo.label-filter='' -ginkgo.json-report="$out/suite.json" >"$out/dry-run.log" 2>&1) ||
	die "the dry run of the e2e suite failed (log: ${out#"$DRAEXT_ROOT"/}/dry-run.log)"
(cd "$DRAEXT_ROOT" && GOWORK=off go run ./cmd/draext-series upstream-table "${mode[@]}" "$out/suite.json" README.md "${pages[@]}") ||
	die "the README table is not the one docs/e2e-upstream gives (see above)"
if [[ ${#mode[@]} -gt 0 ]]; then
	info "the README table matches docs/e2e-upstream (${#pages[@]} release(s))"
else
	log "README table written from ${#pages[@]} release(s): $(basename -a "${pages[@]}" | tr '\n' ' ')"
fi
