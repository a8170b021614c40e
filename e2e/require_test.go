// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// capabilities are what a spec may need of the cluster and skips without:
// the names that E2E_REQUIRE takes.
var capabilities = map[string]string{
	"cluster":           "KUBECONFIG names a cluster",
	"gates":             "the kube-apiserver has the feature gates the KEP-5004 specs need",
	"driver":            "the example driver publishes ResourceSlices",
	"device-plugin":     "a node advertises nvidia.com/gpu through a device plugin",
	"podresources":      "the suite can ask the kubelets' PodResources API",
	"restart":           "the suite can restart the cluster's components",
	"daemonset":         "the example driver runs as a DaemonSet",
	"admin":             "the suite's user is a cluster admin",
	"scheduler-metrics": "the suite can read kube-scheduler's /metrics (E2E_SCHEDULER_METRICS)",
	"pod-network":       "pods on different nodes reach each other (two or more nodes that take pods)",
	"upgrade":           "the cluster runs stock binaries that the suite can swap for patched ones (E2E_BASE_BIN, E2E_UPGRADE_BIN)",
	"upstream-upgrade":  "the suite can move the cluster to stock upstream releases (E2E_UPSTREAM_STEPS, make upstream-upgrade-test)",
	"stock-driver":      "the mock-GPU driver built on stock libraries (compat/stockdriver) publishes ResourceSlices through resource.k8s.io/v1",
}

// required are the capabilities that E2E_REQUIRE names: a spec that needs one
// of them fails when the cluster lacks it, instead of skipping, so that a
// cluster whose driver did not start cannot pass (make test sets it).
var required, requiredErr = parseRequire(os.Getenv("E2E_REQUIRE"))

// parseRequire parses a comma-separated list of capabilities.
func parseRequire(value string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := capabilities[name]; !ok {
			known := make([]string, 0, len(capabilities))
			for k := range capabilities {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("E2E_REQUIRE: unknown capability %q (known: %s)", name, strings.Join(known, ", "))
		}
		set[name] = true
	}
	return set, nil
}

// skipOrFail skips the spec because the cluster lacks the capability, giving
// why, or fails it when E2E_REQUIRE names the capability.
func skipOrFail(capability, why string) {
	GinkgoHelper()
	if _, ok := capabilities[capability]; !ok {
		Fail("internal error: unknown capability " + capability)
	}
	if required[capability] {
		Fail(fmt.Sprintf("E2E_REQUIRE names %q (%s), but %s", capability, capabilities[capability], why))
	}
	Skip(why)
}
