// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/klog/v2/ktesting"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

func mockDevices(t *testing.T, profile, node string) []gpu.Device {
	t.Helper()
	lib, err := gpu.NewMock(profile, node)
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	devices, err := gpu.Discover(ctx, lib)
	if err != nil {
		t.Fatal(err)
	}
	return devices
}

func TestResources(t *testing.T) {
	testCases := map[string]struct {
		profile     string
		unhealthy   []int
		wantDevices []string
		wantProduct string
		wantArch    string
		wantCC      string
		wantMemory  string
	}{
		"8x A100, all healthy": {
			profile:     "dgxa100",
			wantDevices: []string{"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"},
			wantProduct: "Mock NVIDIA A100-SXM4-40GB", wantArch: "ampere", wantCC: "8.0.0", wantMemory: "40Gi",
		},
		"8x H100, two unhealthy GPUs left out": {
			profile:     "dgxh100",
			unhealthy:   []int{1, 6},
			wantDevices: []string{"gpu-0", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-7"},
			wantProduct: "NVIDIA H100 80GB HBM3", wantArch: "hopper", wantCC: "9.0.0", wantMemory: "80Gi",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			devices := mockDevices(t, tc.profile, "node-a")
			unhealthy := map[string]bool{}
			for _, i := range tc.unhealthy {
				unhealthy[devices[i].UUID] = true
			}
			res := Resources("node-a", devices, unhealthy)
			pool, ok := res.Pools["node-a"]
			if len(res.Pools) != 1 || !ok || len(pool.Slices) != 1 {
				t.Fatalf("want one pool node-a with one slice, got %+v", res)
			}
			got := pool.Slices[0].Devices
			if len(got) != len(tc.wantDevices) {
				t.Fatalf("got %d devices, want %d", len(got), len(tc.wantDevices))
			}
			for i, d := range got {
				if d.Name != tc.wantDevices[i] {
					t.Errorf("device %d is %q, want %q", i, d.Name, tc.wantDevices[i])
				}
				var src gpu.Device
				for _, g := range devices {
					if SliceDeviceName(g) == d.Name {
						src = g
					}
				}
				a := d.Basic.Attributes
				checkString(t, d.Name, a, "uuid", src.UUID)
				checkString(t, d.Name, a, "productName", tc.wantProduct)
				checkString(t, d.Name, a, "architecture", tc.wantArch)
				if v := a["cudaComputeCapability"].VersionValue; v == nil || *v != tc.wantCC {
					t.Errorf("%s: cudaComputeCapability %v, want %s", d.Name, v, tc.wantCC)
				}
				if v := a["driverVersion"].VersionValue; v == nil || *v == "" {
					t.Errorf("%s: no driverVersion", d.Name)
				}
				if v := a["index"].IntValue; v == nil || *v != int64(src.Index) {
					t.Errorf("%s: index %v, want %d", d.Name, v, src.Index)
				}
				if m := d.Basic.Capacity["memory"].Value; m.String() != tc.wantMemory {
					t.Errorf("%s: memory %s, want %s", d.Name, m.String(), tc.wantMemory)
				}
				if n := len(a) + len(d.Basic.Capacity); n > resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
					t.Errorf("%s: %d attributes and capacities, the API allows %d", d.Name, n, resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice)
				}
			}
		})
	}
}

func TestResourcesAllUnhealthyKeepsEmptySlice(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	unhealthy := map[string]bool{}
	for _, d := range devices {
		unhealthy[d.UUID] = true
	}
	res := Resources("node-a", devices, unhealthy)
	if s := res.Pools["node-a"].Slices; len(s) != 1 || s[0].Devices == nil || len(s[0].Devices) != 0 {
		t.Fatalf("want one empty slice (the driver runs, no device is usable), got %+v", s)
	}
}

func checkString(t *testing.T, dev string, attrs map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, name, want string) {
	t.Helper()
	if v := attrs[resourceapi.QualifiedName(name)].StringValue; v == nil || *v != want {
		t.Errorf("%s: attribute %s = %v, want %q", dev, name, v, want)
	}
}

func TestSemver(t *testing.T) {
	testCases := []struct {
		in, want string
		ok       bool
	}{
		{"550.54.15", "550.54.15", true},
		{"535.104.05", "535.104.5", true},
		{"8.0", "8.0.0", true},
		{"12", "12.0.0", true},
		{"", "", false},
		{"1.2.3.4", "", false},
		{"550.54.15-beta", "", false},
		{"v550", "", false},
	}
	for _, tc := range testCases {
		got, ok := semver(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("semver(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
