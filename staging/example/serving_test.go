// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestRuleFor(t *testing.T) {
	t.Parallel()
	on := gateState{Name: gateName, State: gateOn}
	unknown := gateState{Name: gateName, State: gateUnknown}
	explicit := []deviceClass{testClass("gpu", gpuName, t0)}
	implicitOnly := []deviceClass{testClass("gpu", "", t0)}
	testCases := map[string]struct {
		version string
		gate    gateState
		classes []deviceClass
		want    servingRule
	}{
		"draext":                        {version: "v1.33.13-draext.1", gate: on, want: ruleAbsentOrZero},
		"draext, gate unknown":          {version: "v1.33.13-draext.2", gate: unknown, want: ruleAbsentOrZero},
		"draext, gate off":              {version: "v1.33.13-draext.1", gate: gateState{State: gateOff}, classes: explicit, want: ruleDevicePluginOnly},
		"1.33 with an explicit name":    {version: "v1.33.13", gate: unknown, classes: explicit, want: ruleAbsentOrZero},
		"stock 1.33":                    {version: "v1.33.13", gate: unknown, classes: implicitOnly, want: ruleDevicePluginOnly},
		"1.32":                          {version: "v1.32.4", gate: unknown, classes: explicit, want: ruleDevicePluginOnly},
		"1.34":                          {version: "v1.34.2", gate: on, want: ruleAbsent},
		"1.34 of a vendor":              {version: "v1.34.1-gke.1200", gate: unknown, want: ruleAbsent},
		"1.35":                          {version: "v1.35.0", gate: on, want: ruleAbsentOrZero},
		"1.37 with build metadata":      {version: "v1.37.1+k3s1", gate: unknown, want: ruleAbsentOrZero},
		"a version that does not parse": {version: "devel", gate: on, want: ruleDevicePluginOnly},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, reason := ruleFor(tc.version, tc.gate, tc.classes)
			if got != tc.want {
				t.Errorf("rule = %s (%s), want %s", got, reason, tc.want)
			}
			if reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestServedBy(t *testing.T) {
	t.Parallel()
	zero, two := resource.MustParse("0"), resource.MustParse("2")
	testCases := map[string]struct {
		rule        servingRule
		allocatable resource.Quantity
		present     bool
		mapped      bool
		want        string
	}{
		"absent or zero: absent":           {rule: ruleAbsentOrZero, mapped: true, want: servedByDRA},
		"absent or zero: zero":             {rule: ruleAbsentOrZero, allocatable: zero, present: true, mapped: true, want: servedByDRA},
		"absent or zero: two":              {rule: ruleAbsentOrZero, allocatable: two, present: true, mapped: true, want: servedByDevicePlugin},
		"absent or zero: absent, no class": {rule: ruleAbsentOrZero, want: servedByNone},
		"absent or zero: zero, no class":   {rule: ruleAbsentOrZero, allocatable: zero, present: true, want: servedByDevicePlugin},
		"absent: absent":                   {rule: ruleAbsent, mapped: true, want: servedByDRA},
		"absent: zero":                     {rule: ruleAbsent, allocatable: zero, present: true, mapped: true, want: servedByDevicePlugin},
		"absent: two":                      {rule: ruleAbsent, allocatable: two, present: true, mapped: true, want: servedByDevicePlugin},
		"device plugin only: absent":       {rule: ruleDevicePluginOnly, mapped: true, want: servedByNone},
		"device plugin only: two":          {rule: ruleDevicePluginOnly, allocatable: two, present: true, mapped: true, want: servedByDevicePlugin},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.rule.servedBy(tc.allocatable, tc.present, tc.mapped); got != tc.want {
				t.Errorf("served by %s, want %s", got, tc.want)
			}
		})
	}
}

func TestResolver(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		classes    []deviceClass
		name       string
		wantClass  string
		wantLosers []string
	}{
		"one class":                 {classes: []deviceClass{testClass("gpu", gpuName, t0)}, name: gpuName, wantClass: "gpu"},
		"the newest wins":           {classes: []deviceClass{testClass("old", gpuName, t0), testClass("new", gpuName, t0.Add(time.Second))}, name: gpuName, wantClass: "new", wantLosers: []string{"old"}},
		"a tie goes to the smaller": {classes: []deviceClass{testClass("b", gpuName, t0), testClass("a", gpuName, t0), testClass("c", gpuName, t0.Add(-time.Hour))}, name: gpuName, wantClass: "a", wantLosers: []string{"b", "c"}},
		"implicit name":             {classes: []deviceClass{testClass("gpu", gpuName, t0)}, name: "deviceclass.resource.kubernetes.io/gpu", wantClass: "gpu"},
		"implicit name of a loser":  {classes: []deviceClass{testClass("old", gpuName, t0), testClass("new", gpuName, t0.Add(time.Second))}, name: "deviceclass.resource.kubernetes.io/old", wantClass: "old"},
		"unknown implicit name":     {classes: []deviceClass{testClass("gpu", "", t0)}, name: "deviceclass.resource.kubernetes.io/nosuch"},
		"unmapped name":             {classes: []deviceClass{testClass("gpu", "", t0)}, name: gpuName},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newResolver(tc.classes)
			got := ""
			if c := r.class(tc.name); c != nil {
				got = c.Name
			}
			if got != tc.wantClass {
				t.Errorf("class(%s) = %q, want %q", tc.name, got, tc.wantClass)
			}
			if losers := r.losers(tc.name); !slices.Equal(losers, tc.wantLosers) {
				t.Errorf("losers(%s) = %q, want %q", tc.name, losers, tc.wantLosers)
			}
		})
	}
}

func TestIsExtendedResourceName(t *testing.T) {
	t.Parallel()
	testCases := map[string]bool{
		"nvidia.com/gpu":                         true,
		"deviceclass.resource.kubernetes.io/gpu": false,
		"kubernetes.io/batch":                    false,
		"cpu":                                    false,
		"hugepages-2Mi":                          false,
		"requests.nvidia.com/gpu":                false,
		"example.com/fpga":                       true,
		"attachable-volumes-csi-ebs.csi.aws.com": false,
	}
	for name, want := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := isExtendedResourceName(v1.ResourceName(name)); got != want {
				t.Errorf("isExtendedResourceName(%s) = %v, want %v", name, got, want)
			}
		})
	}
}

func TestImplicitName(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		class  string
		wantOK bool
	}{
		"short":    {class: "gpu.example.com", wantOK: true},
		"too long": {class: strings.Repeat("a", 64), wantOK: false},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := implicitName(tc.class)
			if ok != tc.wantOK || (ok && got != "deviceclass.resource.kubernetes.io/"+tc.class) {
				t.Errorf("implicitName(%s) = %q, %v; want ok %v", tc.class, got, ok, tc.wantOK)
			}
		})
	}
}
