// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package testselect

import (
	"reflect"
	"testing"
)

func TestGuards(t *testing.T) {
	t.Parallel()
	apiGuards := []string{"./pkg/api/testing", "./staging/src/k8s.io/api"}
	allocatorRace := []string{"./pkg/scheduler/framework/plugins/dynamicresources", "./staging/src/k8s.io/dynamic-resource-allocation/structured"}
	testCases := map[string]struct {
		files       []string
		want        []string
		wantRace    []string
		wantReasons int
	}{
		"internal types":  {files: []string{"pkg/apis/core/types.go"}, want: apiGuards, wantReasons: 1},
		"versioned types": {files: []string{"staging/src/k8s.io/api/resource/v1alpha3/types.go"}, want: apiGuards, wantReasons: 1},
		"hand-written conversion": {
			files: []string{"pkg/apis/resource/v1alpha3/conversion.go"}, want: apiGuards, wantReasons: 1,
		},
		"generated conversion": {
			files: []string{"./pkg/apis/resource/v1alpha3/zz_generated.conversion.go"}, want: apiGuards, wantReasons: 1,
		},
		"generated deepcopy": {files: []string{"pkg/apis/core/zz_generated.deepcopy.go"}, want: apiGuards, wantReasons: 1},
		"protobuf":           {files: []string{"staging/src/k8s.io/api/core/v1/generated.pb.go"}, want: apiGuards, wantReasons: 1},
		"proto definition":   {files: []string{"staging/src/k8s.io/api/core/v1/generated.proto"}, want: apiGuards, wantReasons: 1},
		"many matches count once": {
			files: []string{"pkg/apis/core/types.go", "staging/src/k8s.io/api/core/v1/types.go"}, want: apiGuards, wantReasons: 1,
		},
		"validation is not an API type": {files: []string{"pkg/apis/core/validation/validation.go"}, want: []string{}},
		"registry strategy":             {files: []string{"pkg/registry/core/pod/strategy.go"}, want: []string{}},
		"types.go elsewhere":            {files: []string{"pkg/api/pod/types.go"}, want: []string{}},
		"scheduler": {
			files: []string{"pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go", "pkg/scheduler/framework/types.go"},
			want:  []string{"./pkg/scheduler/..."}, wantReasons: 1,
		},
		"client-go apply configurations": {
			files: []string{"staging/src/k8s.io/client-go/applyconfigurations/core/v1/podstatus.go"}, want: []string{},
		},
		"structured allocator": {
			files:    []string{"staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go"},
			want:     []string{"./pkg/scheduler/framework/plugins/dynamicresources", "./test/integration/scheduler_perf/dra"},
			wantRace: allocatorRace, wantReasons: 1,
		},
		"types and allocator": {
			files:       []string{"pkg/apis/core/types.go", "staging/src/k8s.io/dynamic-resource-allocation/structured/allocator_test.go"},
			want:        []string{"./pkg/api/testing", "./pkg/scheduler/framework/plugins/dynamicresources", "./staging/src/k8s.io/api", "./test/integration/scheduler_perf/dra"},
			wantRace:    allocatorRace,
			wantReasons: 2,
		},
		"extended resource resolver": {
			files:    []string{"staging/src/k8s.io/dynamic-resource-allocation/extendedresource/resolver.go"},
			want:     []string{},
			wantRace: []string{"./staging/src/k8s.io/dynamic-resource-allocation/extendedresource"}, wantReasons: 1,
		},
		"kubelet DRA manager": {
			files:       []string{"pkg/kubelet/cm/dra/manager.go", "pkg/kubelet/lifecycle/predicate.go"},
			want:        []string{"./pkg/kubelet/apis/podresources/...", "./pkg/kubelet/cm/...", "./pkg/kubelet/lifecycle/...", "./pkg/kubelet/status/..."},
			wantReasons: 1,
		},
		"quota evaluator": {
			files:       []string{"pkg/quota/v1/evaluator/core/resource_claims.go", "pkg/quota/v1/install/registry.go"},
			want:        []string{"./pkg/controller/resourcequota/...", "./pkg/quota/...", "./plugin/pkg/admission/resourcequota/...", "./test/integration/quota"},
			wantReasons: 1,
		},
		"ResourceClaim registry": {
			files: []string{"pkg/registry/resource/resourceclaim/strategy.go"}, want: []string{"./pkg/registry/resource/..."}, wantReasons: 1,
		},
		"scheduler_perf harness": {
			files:       []string{"test/integration/scheduler_perf/util.go", "test/integration/scheduler_perf/collectors_test.go"},
			want:        []string{"./test/integration/scheduler_perf", "./test/integration/scheduler_perf/dra"},
			wantReasons: 1,
		},
		"scheduler_perf workloads": {
			files: []string{"test/integration/scheduler_perf/dra/extendedresource/performance-config.yaml"}, want: []string{},
		},
		"kubelet main package":   {files: []string{"pkg/kubelet/kubelet.go"}, want: []string{}},
		"other DRA library code": {files: []string{"staging/src/k8s.io/dynamic-resource-allocation/kubeletplugin/draplugin.go"}, want: []string{}},
		"nothing changed":        {want: []string{}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, race, reasons := Guards(tc.files)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Guards(%q) = %q, want %q", tc.files, got, tc.want)
			}
			if wantRace := tc.wantRace; !reflect.DeepEqual(race, wantRace) && (len(race) != 0 || len(wantRace) != 0) {
				t.Errorf("Guards(%q) race packages = %q, want %q", tc.files, race, wantRace)
			}
			if len(reasons) != tc.wantReasons {
				t.Errorf("Guards(%q) gave reasons %q, want %d", tc.files, reasons, tc.wantReasons)
			}
		})
	}
}
