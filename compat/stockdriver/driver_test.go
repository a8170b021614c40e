// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestDeviceNames(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		n    int
		want []string
	}{
		"none":    {n: 0, want: []string{}},
		"one":     {n: 1, want: []string{"gpu-0"}},
		"default": {n: 2, want: []string{"gpu-0", "gpu-1"}},
		"eleven":  {n: 11, want: []string{"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7", "gpu-8", "gpu-9", "gpu-10"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := deviceNames(tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("deviceNames(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestDriverResources(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		node    string
		n       int
		library string
	}{
		"one":         {node: "127.0.0.1", n: 1, library: "v0.34.13"},
		"two":         {node: "127.0.0.2", n: 2, library: "v0.37.2"},
		"most":        {node: "node-a", n: maxDevices, library: "unknown"},
		"node a name": {node: "worker-1.example", n: 3, library: "v0.34.13"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := driverResources(tc.node, tc.n, tc.library)
			if len(got.Pools) != 1 {
				t.Fatalf("pools %v, want one named %s", got.Pools, tc.node)
			}
			pool, ok := got.Pools[tc.node]
			if !ok || len(pool.Slices) != 1 {
				t.Fatalf("pool %s: %+v, want one slice", tc.node, got.Pools)
			}
			devices := pool.Slices[0].Devices
			if len(devices) != tc.n {
				t.Fatalf("%d devices, want %d", len(devices), tc.n)
			}
			for i, d := range devices {
				want := resourceapi.Device{
					Name: deviceNames(tc.n)[i],
					Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
						"index":   {IntValue: ptr.To(int64(i))},
						"model":   {StringValue: ptr.To("mock")},
						"library": {StringValue: ptr.To(tc.library)},
					},
				}
				if !reflect.DeepEqual(d, want) {
					t.Errorf("device %d = %+v, want %+v", i, d, want)
				}
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	for device, want := range map[string]string{
		"gpu-0":  "MOCK_GPU_GPU_0",
		"gpu-10": "MOCK_GPU_GPU_10",
		"a.b_c":  "MOCK_GPU_A_B_C",
	} {
		if got := envName(device); got != want {
			t.Errorf("envName(%q) = %q, want %q", device, got, want)
		}
	}
}

func TestCDISpec(t *testing.T) {
	t.Parallel()
	const driverName = "mock-gpu.stock.draext.dev"
	for name, tc := range map[string]struct {
		claim   types.UID
		devices []string
		want    string // the spec as JSON
		ids     map[string]string
		wantErr string
	}{
		"one device": {
			claim:   "uid-1",
			devices: []string{"gpu-1"},
			want: `{"cdiVersion":"0.5.0","kind":"mock-gpu.stock.draext.dev/claim",
				"devices":[{"name":"uid-1-gpu-1","containerEdits":{"env":["MOCK_GPU_GPU_1=gpu-1"]}}],
				"containerEdits":{"env":["MOCK_GPU_DRIVER=mock-gpu.stock.draext.dev"]}}`,
			ids: map[string]string{"gpu-1": "mock-gpu.stock.draext.dev/claim=uid-1-gpu-1"},
		},
		"two devices keep their order": {
			claim:   "uid-2",
			devices: []string{"gpu-1", "gpu-0"},
			want: `{"cdiVersion":"0.5.0","kind":"mock-gpu.stock.draext.dev/claim",
				"devices":[{"name":"uid-2-gpu-1","containerEdits":{"env":["MOCK_GPU_GPU_1=gpu-1"]}},
				           {"name":"uid-2-gpu-0","containerEdits":{"env":["MOCK_GPU_GPU_0=gpu-0"]}}],
				"containerEdits":{"env":["MOCK_GPU_DRIVER=mock-gpu.stock.draext.dev"]}}`,
			ids: map[string]string{
				"gpu-0": "mock-gpu.stock.draext.dev/claim=uid-2-gpu-0",
				"gpu-1": "mock-gpu.stock.draext.dev/claim=uid-2-gpu-1",
			},
		},
		"no claim UID":   {devices: []string{"gpu-0"}, wantErr: "claim UID must not be empty"},
		"no devices":     {claim: "uid-3", wantErr: "no devices"},
		"a device twice": {claim: "uid-4", devices: []string{"gpu-0", "gpu-0"}, wantErr: "device gpu-0 is allocated twice"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := cdiWriter{dir: t.TempDir(), driver: driverName}
			spec, ids, err := w.spec(tc.claim, tc.devices)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if _, err := w.write(tc.claim, tc.devices); err == nil {
					t.Errorf("write succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want cdiSpec
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatalf("the test's spec: %v", err)
			}
			if !reflect.DeepEqual(spec, want) {
				t.Errorf("spec\n%+v\nwant\n%+v", spec, want)
			}
			if !reflect.DeepEqual(ids, tc.ids) {
				t.Errorf("CDI device IDs %v, want %v", ids, tc.ids)
			}

			// write puts that spec into the directory, remove takes it away.
			if _, err := w.write(tc.claim, tc.devices); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(w.dir, driverName+"-claim_"+string(tc.claim)+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var written cdiSpec
			if err := json.Unmarshal(data, &written); err != nil || !reflect.DeepEqual(written, want) {
				t.Errorf("written spec %s (%v), want %+v", data, err, want)
			}
			if entries, _ := os.ReadDir(w.dir); len(entries) != 1 {
				t.Errorf("%d files in the CDI directory, want the spec alone", len(entries))
			}
			for range 2 { // the second time finds nothing to remove
				if err := w.remove(tc.claim); err != nil {
					t.Fatal(err)
				}
			}
			if entries, _ := os.ReadDir(w.dir); len(entries) != 0 {
				t.Errorf("%d files left in the CDI directory", len(entries))
			}
		})
	}
}

func TestAllocatedDevices(t *testing.T) {
	t.Parallel()
	d := &driver{name: "mock-gpu.stock.draext.dev", node: "node-a", devices: deviceNames(2)}
	result := func(driver, pool, device, request string) resourceapi.DeviceRequestAllocationResult {
		return resourceapi.DeviceRequestAllocationResult{Driver: driver, Pool: pool, Device: device, Request: request}
	}
	for name, tc := range map[string]struct {
		results     []resourceapi.DeviceRequestAllocationResult
		unallocated bool
		want        []allocation
		wantErr     string
	}{
		"one": {
			results: []resourceapi.DeviceRequestAllocationResult{result(d.name, "node-a", "gpu-1", "container-0-request-0")},
			want:    []allocation{{request: "container-0-request-0", device: "gpu-1"}},
		},
		"another driver's results are left out": {
			results: []resourceapi.DeviceRequestAllocationResult{
				result("gpu.draext.dev", "node-a", "gpu-0", "a"),
				result(d.name, "node-a", "gpu-0", "b"),
				result(d.name, "node-a", "gpu-1", "c"),
			},
			want: []allocation{{request: "b", device: "gpu-0"}, {request: "c", device: "gpu-1"}},
		},
		"not allocated": {unallocated: true, wantErr: "is not allocated"},
		"no device of the driver": {
			results: []resourceapi.DeviceRequestAllocationResult{result("gpu.draext.dev", "node-a", "gpu-0", "a")},
			wantErr: "has no device of driver",
		},
		"another node's pool": {
			results: []resourceapi.DeviceRequestAllocationResult{result(d.name, "node-b", "gpu-0", "a")},
			wantErr: "pool of another node",
		},
		"unknown device": {
			results: []resourceapi.DeviceRequestAllocationResult{result(d.name, "node-a", "gpu-2", "a")},
			wantErr: "device gpu-2 is not one of the 2 devices",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim", UID: "uid"}}
			if !tc.unallocated {
				claim.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: tc.results}}
			}
			got, err := d.allocatedDevices(claim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	deps := []*debug.Module{
		{Path: "k8s.io/api", Version: "v0.34.13"},
		{Path: libraryModule, Version: "v0.34.13"},
		{Path: "k8s.io/client-go", Version: "v0.34.13", Replace: &debug.Module{Path: "k8s.io/client-go", Version: "v0.34.4"}},
	}
	for path, want := range map[string]string{
		libraryModule:      "v0.34.13",
		"k8s.io/client-go": "v0.34.4",
		"k8s.io/kubelet":   "unknown",
	} {
		if got := moduleVersion(deps, path); got != want {
			t.Errorf("moduleVersion(%s) = %q, want %q", path, got, want)
		}
	}
}
