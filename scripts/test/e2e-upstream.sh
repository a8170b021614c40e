#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make e2e-upstream VERSION=v1.3x.y: the e2e suite against a local
# cluster of stock binaries of that release (make build-upstream, built here
# when missing or stale), NODES=2 (a DRA node and a device-plugin node), the
# example driver and the stock-library driver. Every spec runs; what passes
# and what fails on upstream is the result, written with its date to
# docs/e2e-upstream/<version>.md (Ginkgo's JSON report in
# _output/e2e-upstream/<version>/). The target fails only when the cluster or
# the suite could not run, not when a spec fails on upstream. It takes about
# an hour (E2E_UPSTREAM_TIMEOUT_MIN, default 120, bounds the suite).
# FOCUS=<regex> runs only the specs whose text matches (Ginkgo's focus) and
# replaces their rows in the existing page, which then says when they ran:
# how a new or changed spec gets its result without running the whole suite.
# FORWARD=1 runs it against the release with the forward series of its minor
# applied (patches/v1.37 for VERSION=v1.37.2): the page
# docs/e2e-upstream/<version>-forward.md, a README column of its own.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -n $UPSTREAM ]] || die "set VERSION, e.g. make e2e-upstream VERSION=v1.35.4"
FOCUS=${FOCUS:-}
FORWARD=${FORWARD:-}
binaries="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl"
if [[ -n $FORWARD ]]; then
	# FORWARD=1: the release with the forward series of its minor
	# (patches/v1.MM, whose GIT_TAG must be this release), built by
	# RELEASE_BRANCH=v1.MM make build into that series' own bin folder. The
	# page is of version <release>+forward, a column of its own beside the
	# stock one.
	forward_branch=${UPSTREAM%.*}
	forward_tag=$(cat "$DRAEXT_ROOT/patches/$forward_branch/GIT_TAG" 2>/dev/null) ||
		die "FORWARD=1: there is no forward series for $UPSTREAM (patches/$forward_branch/GIT_TAG)"
	[[ $forward_tag == "$UPSTREAM" ]] ||
		die "FORWARD=1: patches/$forward_branch is a series on $forward_tag, not on $UPSTREAM" "use VERSION=$forward_tag"
	version=$UPSTREAM+forward
	doc=$DRAEXT_ROOT/docs/e2e-upstream/$UPSTREAM-forward.md
	out=$OUTPUT_DIR/e2e-upstream/$UPSTREAM-forward
	kbin=$OUTPUT_DIR/$forward_branch/bin
else
	version=$UPSTREAM
	doc=$DRAEXT_ROOT/docs/e2e-upstream/$UPSTREAM.md
	out=$OUTPUT_DIR/e2e-upstream/$UPSTREAM
	kbin=$UPSTREAM_DIR/$UPSTREAM/bin
fi
[[ -z $FOCUS || -f $doc ]] || die "FOCUS= replaces rows of ${doc#"$DRAEXT_ROOT"/}, which does not exist" "run make e2e-upstream VERSION=$UPSTREAM${FORWARD:+ FORWARD=1} without FOCUS first"
require_own_cluster "make e2e-upstream"
if [[ -n $FORWARD ]]; then
	RELEASE_BRANCH=$forward_branch UPSTREAM='' WHAT=$binaries bash "$DRAEXT_ROOT/scripts/build/build.sh"
else
	WHAT=$binaries bash "$DRAEXT_ROOT/scripts/build/build.sh"
fi
# A focused run keeps the report of the last whole one.
[[ -z $FOCUS ]] || out+=-focus
rm -rf "$out"
mkdir -p "$out"
start=$(now_s)
trap 'PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh" || true' EXIT
NODES=2 DRIVER=host KBIN=$kbin bash "$DRAEXT_ROOT/scripts/cluster/up.sh" 2>&1 | tee "$out/up.log" ||
	die "make up with the $version binaries failed (log: ${out#"$DRAEXT_ROOT"/}/up.log)"
rc=0
# No E2E_REQUIRE: a spec whose capability the cluster lacks skips, and says why.
# Specs that fail on a release wait out their timeouts (up to 5 minutes each):
# against 1.34.4 the suite ran past make test's 30 minutes at spec 35 of 61.
# Ginkgo's own timeout comes first, so that it still writes its report.
timeout_min=${E2E_UPSTREAM_TIMEOUT_MIN:-120}
focus_args=()
[[ -z $FOCUS ]] || focus_args=("-ginkgo.focus=$FOCUS")
KUBECONFIG=$KUBECONFIG_FILE E2E_REQUIRE='' E2E_TIMEOUT=$((timeout_min + 5))m \
	E2E_ARGS="-ginkgo.timeout=${timeout_min}m -ginkgo.json-report=$out/report.json ${E2E_ARGS:-}" \
	bash "$DRAEXT_ROOT/scripts/test/e2e.sh" "${focus_args[@]}" 2>&1 | tee "$out/e2e.log" || rc=$?
[[ -s $out/report.json ]] || die "the suite wrote no report against $version (log: ${out#"$DRAEXT_ROOT"/}/e2e.log)"
trap - EXIT
PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh"
mkdir -p "${doc%/*}"
merge=()
[[ -z $FOCUS ]] || merge=(-merge "$doc" "$FOCUS")
(cd "$DRAEXT_ROOT" && GOWORK=off go run ./cmd/draext-series e2e-results "${merge[@]}" "$version" "$out/report.json") >"$out/page.md" ||
	die "could not summarize $out/report.json"
mv "$out/page.md" "$doc"
log "e2e suite against $version ($(($(now_s) - start))s, suite rc=$rc): ${doc#"$DRAEXT_ROOT"/}"
grep -m1 '^Passed' "$doc" >&2 || true
