// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package testselect

import (
	"path"
	"regexp"
	"sort"
	"strings"
)

// A guard is a set of upstream test packages that protect a mechanism shared by
// many packages: the tests of the changed packages alone do not exercise it.
type guard struct {
	// why says in a few words what the guard protects, for the log.
	why string
	// match selects the changed files that touch the mechanism.
	match *regexp.Regexp
	// pkgs are the guarding test packages, as "./dir" patterns for go test.
	pkgs []string
	// race are packages whose concurrency tests (named *Concurrent*) must
	// also pass under the race detector.
	race []string
}

// guards are the shared mechanisms the series touches today. API types and
// their generated code are guarded by the generic round-trip and fuzzing
// tests (pkg/api/testing: every internal kind through every served version)
// and by the API compatibility fixtures (staging/src/k8s.io/api); a lossy
// hand-written conversion passes every test of its own package and fails
// only there. The structured allocator is guarded by the tests of the
// scheduler plugin that calls it and by scheduler_perf's DRA workloads; any
// scheduler change by all of pkg/scheduler's tests; a change of the kubelet's
// resource managers or admission by the tests of all of them.
var guards = []guard{{
	why: "API types, conversions or generated API code",
	match: regexp.MustCompile(`^(pkg/apis/[^/]+(/v[0-9][^/]*)?|staging/src/k8s\.io/api/[^/]+/v[0-9][^/]*)/` +
		`(types\.go|conversion\.go|zz_generated\.[a-z_]+\.go|generated\.pb\.go|generated\.proto)$`),
	pkgs: []string{"./pkg/api/testing", "./staging/src/k8s.io/api"},
}, {
	why:   "the structured allocator, which the scheduler's DRA plugin drives",
	match: regexp.MustCompile(`^staging/src/k8s\.io/dynamic-resource-allocation/structured/`),
	// The plugin's unit tests, and scheduler_perf's DRA workloads (a real
	// apiserver and scheduler; about 3 minutes).
	pkgs: []string{"./pkg/scheduler/framework/plugins/dynamicresources", "./test/integration/scheduler_perf/dra"},
	// Filter calls the allocator for many nodes in parallel.
	race: []string{"./pkg/scheduler/framework/plugins/dynamicresources", "./staging/src/k8s.io/dynamic-resource-allocation/structured"},
}, {
	why:   "the scheduler: its framework, queue and plugins",
	match: regexp.MustCompile(`^pkg/scheduler/`),
	pkgs:  []string{"./pkg/scheduler/..."},
}, {
	why: "the kubelet's resource managers and admission, which hand devices to containers",
	// The DRA and device managers feed the topology manager (hints), the
	// container manager (run options, PodResources) and admission; the
	// status manager writes what the scheduler's mapping lives in.
	match: regexp.MustCompile(`^pkg/kubelet/(cm|lifecycle|status|apis/podresources)/`),
	pkgs:  []string{"./pkg/kubelet/apis/podresources/...", "./pkg/kubelet/cm/...", "./pkg/kubelet/lifecycle/...", "./pkg/kubelet/status/..."},
}, {
	why: "quota evaluators and their configuration, which admission and the quota controller share",
	// The admission plugin and the controller run every evaluator; the
	// quota integration test runs both against a real apiserver.
	match: regexp.MustCompile(`^pkg/quota/`),
	pkgs:  []string{"./pkg/controller/resourcequota/...", "./pkg/quota/...", "./plugin/pkg/admission/resourcequota/...", "./test/integration/quota"},
}, {
	why:   "the ResourceClaim registry, which every claim write goes through",
	match: regexp.MustCompile(`^pkg/registry/resource/`),
	pkgs:  []string{"./pkg/registry/resource/..."},
}, {
	why: "the scheduler_perf harness, which every scheduler_perf workload runs on",
	// Its own unit tests, and the DRA workloads' fast sizes (the upstream
	// DRA workloads besides ours; about 3 minutes).
	match: regexp.MustCompile(`^test/integration/scheduler_perf/[^/]+\.go$`),
	pkgs:  []string{"./test/integration/scheduler_perf", "./test/integration/scheduler_perf/dra"},
}, {
	why:   "the extended resource resolver, which scheduler plugins read concurrently",
	match: regexp.MustCompile(`^staging/src/k8s\.io/dynamic-resource-allocation/extendedresource/`),
	race:  []string{"./staging/src/k8s.io/dynamic-resource-allocation/extendedresource"},
}}

// Guards maps files changed by the series (paths relative to the tree root) to
// the upstream test packages that guard the shared mechanisms these files
// touch, and to the packages whose concurrency tests must pass under the race
// detector, each sorted and each package once. The reasons are returned
// beside them, one per guard that matched, for the log.
func Guards(files []string) (pkgs, race, reasons []string) {
	seen, seenRace := map[string]bool{}, map[string]bool{}
	for _, g := range guards {
		for _, f := range files {
			f = path.Clean(strings.TrimPrefix(f, "./"))
			if !g.match.MatchString(f) {
				continue
			}
			reasons = append(reasons, g.why+" ("+f+")")
			for _, p := range g.pkgs {
				seen[p] = true
			}
			for _, p := range g.race {
				seenRace[p] = true
			}
			break
		}
	}
	return sortedKeys(seen), sortedKeys(seenRace), reasons
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
