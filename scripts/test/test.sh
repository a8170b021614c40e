#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# The project's test command (make test, and so .ci/run):
#  1. make unit: go vet and the unit tests of this repository's own Go code
#     and the shell helpers' checks (scripts/test/unit.sh);
#  2. make verify: gofmt, license headers, shellcheck, golangci-lint, logcheck
#     and patches-verify (metadata, checksums, replay on a pristine base,
#     re-export, byte diff) (scripts/test/verify.sh);
#  3. gofmt and go vet of what the series touches;
#  4. feature list verification when the series touches feature gates;
#  5. the in-tree tests of every Go package the series changes, derived from the
#     series itself (draext-series packages), and the upstream tests that guard
#     the shared mechanisms it touches (draext-series guards, see
#     internal/tooling/testselect/guards.go: API round-trip/fuzz and compatibility fixtures,
#     pkg/scheduler/..., scheduler_perf's DRA workloads, and *Concurrent* tests
#     under -race). Integration packages
#     (test/integration/...) get the pinned etcd, built by scripts/build/install-etcd.sh;
#  6. wire compatibility (compat/upstream), against stock k8s.io/api v0.34, v0.35,
#     v0.36 and v0.37 (go.mod, go.v03N.mod): stock decodes the patched tree's API
#     fixtures and the objects its apiserver served in step 5, every field of its
#     resource.k8s.io/v1 types is in stock with the same tags, and its types
#     (compat/draextside, on the staging modules, exported here) decode what stock
#     writes; the stock fields it lacks go to _output/compat/resource-v1-stock-fields.md;
#  7. the staging modules: make staging (exported twice, byte-identical), the
#     consumers' go.sum checked against it, staging/example built and tested,
#     the e2e suite vetted against it; both linted with golangci-lint;
#  8. the local cluster: make up NODES=2 (patched binaries, example driver as host
#     processes, a DRA node and a device-plugin node), then NODES=1 with the driver
#     as a DaemonSet from overlays/; each time the e2e suite and the demo, then
#     make down PURGE=1, also when something failed. SKIP_CLUSTER=1 skips it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/staging.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"

need_base_tools
need_tool gofmt "it ships with Go: put $(go env GOROOT 2>/dev/null || echo GOROOT)/bin on PATH"
start=$(now_s)
step() { log "[$1/8] $2"; }

step 1 "make unit: draext's own Go code and shell helpers"
bash "$DRAEXT_ROOT/scripts/test/unit.sh"

step 2 "make verify: gofmt, headers, shellcheck, golangci-lint, logcheck, patches-verify"
bash "$DRAEXT_ROOT/scripts/test/verify.sh"

"$DRAEXT_ROOT/scripts/series/patches-apply.sh" --if-needed
TAG=$(git_tag)
mapfile -t changed < <(git -C "$KUBE_TREE" diff --name-only --diff-filter=d "refs/tags/$TAG" "refs/heads/$PATCH_BRANCH")
mapfile -t gofiles < <(printf '%s\n' "${changed[@]}" | grep '\.go$' || true)
mapfile -t pkgs < <(printf '%s\n' "${changed[@]}" | series_tool packages "$KUBE_TREE")
info "the series changes ${#changed[@]} file(s) in ${#pkgs[@]} Go package(s): ${pkgs[*]:-none}"
# Shared mechanisms are guarded by upstream tests outside the changed packages
# (API types: the round-trip/fuzz tests and the API compatibility fixtures).
guard_pkgs=() race_pkgs=()
while IFS= read -r line; do
	case $line in
	"#"*) info "guarded: ${line#\# }" ;;
	"race "*) race_pkgs+=("${line#race }") ;;
	*) printf '%s\n' "${pkgs[@]}" | grep -qxF -- "$line" || guard_pkgs+=("$line") ;;
	esac
done < <(printf '%s\n' "${changed[@]}" | series_tool guards)
[[ ${#guard_pkgs[@]} -eq 0 ]] || info "guard packages also tested: ${guard_pkgs[*]}"
[[ ${#race_pkgs[@]} -eq 0 ]] || info "concurrency tests also run with -race in: ${race_pkgs[*]}"

step 3 "gofmt and go vet of what the series touches"
if [[ ${#gofiles[@]} -gt 0 ]]; then
	unformatted=$(cd "$KUBE_TREE" && gofmt -l "${gofiles[@]}")
	[[ -z $unformatted ]] || die "these files of the series are not gofmt-formatted:" "$unformatted" \
		"run gofmt -w on them in $KUBE_TREE, commit on $PATCH_BRANCH and make patches-export"
fi
if [[ ${#pkgs[@]} -gt 0 ]]; then
	(cd "$KUBE_TREE" && go vet "${pkgs[@]}")
fi

step 4 "feature list verification"
if printf '%s\n' "${changed[@]}" | grep -qE '(^|/)kube_features\.go$|^test/compatibility_lifecycle/'; then
	(cd "$KUBE_TREE" && go run test/compatibility_lifecycle/main.go feature-gates verify >/dev/null) ||
		die "test/compatibility_lifecycle/reference/versioned_feature_list.yaml does not match the feature gates" \
			"run hack/update-featuregates.sh in $KUBE_TREE, commit on $PATCH_BRANCH and make patches-export"
	info "versioned feature list matches the feature gates"
else
	info "the series touches no feature gate"
fi

step 5 "in-tree tests of the packages the series changes"
if printf '%s\n' "${pkgs[@]}" "${guard_pkgs[@]}" | grep -q '^\./test/integration/'; then
	"$DRAEXT_ROOT/scripts/build/install-etcd.sh"
	export PATH="$TOOLS_DIR/etcd:$PATH"
fi
if [[ ${#pkgs[@]} -eq 0 ]]; then
	info "no Go package changed"
else
	log "draext: all checks before the in-tree tests passed ($(($(now_s) - start))s so far)"
	# The series' integration test saves objects as the apiserver served them here.
	wire=$OUTPUT_DIR/wire
	rm -rf "$wire"
	# Some upstream tests leave their os.MkdirTemp directories behind
	# (kubelet/cm/dra's manager_test: 45 /tmp/dra* per run): give them a
	# TMPDIR of their own (in the caller's TMPDIR, or /tmp) and remove it
	# when they pass. Keep the name short: tests put unix sockets there (at
	# most 107 bytes).
	gotmp=$(mktemp -d -t draext-go.XXXXXX)
	(cd "$KUBE_TREE" && TMPDIR=$gotmp DRAEXT_WIRE_DIR=$wire go test -count=1 "${pkgs[@]}" "${guard_pkgs[@]}")
	if [[ ${#race_pkgs[@]} -gt 0 ]]; then
		(cd "$KUBE_TREE" && TMPDIR=$gotmp go test -race -count=1 -run 'Concurrent' "${race_pkgs[@]}")
	fi
	rm -rf "$gotmp"
fi

step 6 "wire compatibility: stock k8s.io/api v0.34-v0.37 and the patched tree, both ways"
# The reverse direction (compat/draextside: draext's types decode what stock
# writes) builds on the exported staging modules: export them now when stale;
# step 7 checks the export again and that it is reproducible.
"$DRAEXT_ROOT/scripts/build/staging.sh"
wire_env=()
[[ -n $(ls -A "$OUTPUT_DIR/wire" 2>/dev/null) ]] && wire_env=(DRAEXT_WIRE_DIR="$OUTPUT_DIR/wire")
compat_report=$OUTPUT_DIR/compat/resource-v1-stock-fields.md
rm -f "$compat_report"
mkdir -p "${compat_report%/*}"
for modfile in go.mod go.v035.mod go.v036.mod go.v037.mod; do
	stock=$(awk '$1 == "k8s.io/api" { print $2 }' "$DRAEXT_ROOT/compat/upstream/$modfile")
	info "compat/upstream against stock k8s.io/api $stock ($modfile)"
	(cd "$DRAEXT_ROOT/compat/upstream" && staging_env env KUBE_TREE="$KUBE_TREE" "${wire_env[@]}" DRAEXT_COMPAT_REPORT="$compat_report" \
		go test -modfile="$modfile" -count=1 ./...) ||
		die "compat/upstream failed against stock k8s.io/api $stock (see above)" \
			"where draext's resource.k8s.io/v1 disagrees with stock, the series changes, not the test"
done
golangci_lint compat/draextside staging_env
lacks=$(awk '/^## k8s.io\/api / { v = $3 } /field\(s\) of stock that draext lacks/ { printf "%s%s: %s", sep, v, $1; sep = ", " }' "$compat_report")
info "stock resource.k8s.io/v1 fields that draext lacks: $lacks (list: ${compat_report#"$DRAEXT_ROOT"/})"

step 7 "staging modules: export, reproducibility, staging/example, e2e vet and lint, README upstream table"
"$DRAEXT_ROOT/scripts/build/staging.sh" --verify
(cd "$DRAEXT_ROOT/staging/example" && staging_go vet ./... && staging_go test -count=1 ./... && staging_go build -o "$TOOLS_DIR/kubectl-draext" .)
(cd "$DRAEXT_ROOT/e2e" && staging_go vet ./...)
# golangci-lint of the two modules built on the exported modules: make
# verify runs before they exist, so it lints only the others.
golangci_lint staging/example staging_env
golangci_lint e2e staging_env
info "staging/example (kubectl-draext) and the e2e suite build against the exported modules and pass golangci-lint"
# The README's upstream table: every row's specs exist, and the release
# columns are those the e2e-upstream pages give.
bash "$DRAEXT_ROOT/scripts/test/upstream-table.sh" --check

step 8 "local cluster: make up, e2e suite, demo, make down PURGE=1 (host-process and DaemonSet driver)"
# cluster_check REQUIRE ENV...: one cluster with ENV, the suite against it with
# E2E_REQUIRE=REQUIRE (what the cluster must have: a spec that needs it fails
# instead of skipping), the demo, and proof that make down leaves nothing
# behind.
cluster_check() {
	local netns_before netns_new leftovers mounts cgroups require=$1
	shift
	log "local cluster with $*"
	netns_before=$(ip netns list 2>/dev/null | awk '{print $1}' | sort)
	trap 'PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh" || true' EXIT
	env "$@" bash "$DRAEXT_ROOT/scripts/cluster/up.sh"
	E2E_REQUIRE=$require bash "$DRAEXT_ROOT/scripts/test/e2e.sh"
	bash "$DRAEXT_ROOT/scripts/cluster/demo.sh"
	# kubectl-draext (staging/example), built on the exported modules, reads
	# the typed field from the real apiserver.
	local classes
	classes=$("$TOOLS_DIR/kubectl-draext" classes --kubeconfig "$OUTPUT_DIR/cluster/kubeconfig")
	info "kubectl-draext classes lists: $(tr '\n' ';' <<<"$classes")"
	grep -qE '^gpu\.draext\.dev +nvidia\.com/gpu, deviceclass\.resource\.kubernetes\.io/gpu\.draext\.dev( |$)' <<<"$classes" ||
		die "kubectl-draext classes did not list DeviceClass gpu.draext.dev as serving nvidia.com/gpu"
	trap - EXIT
	PURGE=1 bash "$DRAEXT_ROOT/scripts/cluster/down.sh"
	leftovers=$(pgrep -fa "$OUTPUT_DIR/(bin|cluster/bin|tools/etcd)/" || true)
	[[ -z $leftovers ]] || die "make down left processes behind:" "$leftovers"
	mounts=$(findmnt -rn -o TARGET | grep -E '^/var/lib/draext-cluster|^/run/draext-cluster|^/var/lib/kubelet/device-plugins$' || true)
	[[ -z $mounts ]] || die "make down left mounts behind:" "$mounts"
	cgroups=$(ls -d /sys/fs/cgroup/*/draext-node* 2>/dev/null || true)
	[[ -z $cgroups ]] || die "make down left cgroups behind:" "$cgroups"
	netns_new=$(comm -13 <(echo "$netns_before") <(ip netns list 2>/dev/null | awk '{print $1}' | sort))
	[[ -z $netns_new ]] || die "make down left network namespaces behind:" "$netns_new"
	info "make down left no process, mount, cgroup or network namespace behind"
}
if [[ $SKIP_CLUSTER == 1 ]]; then
	info "skipped (SKIP_CLUSTER=1)"
else
	[[ $(id -u) == 0 ]] || die "the local cluster needs root; run as root or set SKIP_CLUSTER=1"
	if [[ -f $OUTPUT_DIR/cluster/run/nodes ]] && pgrep -f "$OUTPUT_DIR/bin/kube-apiserver" >/dev/null; then
		die "a local cluster is already running: make down first (the test needs its own)"
	fi
	# Two nodes, drivers as host processes: DRA on one, the device plugin on the other.
	cluster_check cluster,gates,driver,device-plugin,podresources,restart,admin,scheduler-metrics,stock-driver NODES=2 DRIVER=host
	# One node, the driver deployed from overlays/ as a DaemonSet with its image.
	# The specs of the API server's rules, the scheduler's allocation and
	# preemption, and the controllers under load do not depend on how the
	# driver runs and ran against the cluster above: they are left out here
	# (about 3 minutes; a cold make test was 82.6 minutes on 2026-12-06,
	# measured beside other compiles).
	E2E_ARGS="${E2E_ARGS:+$E2E_ARGS }-ginkgo.skip=DeviceClass\.spec\.extendedResourceName|by.its.implicit.name|Preemption.for|stall.the.scheduler|repointed.claims.and.resizes|under.load" \
		cluster_check cluster,gates,driver,podresources,restart,daemonset,admin,scheduler-metrics,stock-driver NODES=1 DRIVER=daemonset
fi
log "make test: all steps passed ($(($(now_s) - start))s)"
