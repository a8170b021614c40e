// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package cdi

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeDevRoot makes a /dev with the given nodes as plain files.
func fakeDevRoot(t *testing.T, nodes ...string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := os.WriteFile(filepath.Join(root, "dev", n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func gpus(indexes ...int) []gpu.Device {
	var devices []gpu.Device
	for _, i := range indexes {
		devices = append(devices, gpu.Device{Index: i, Minor: i, UUID: gpu.DeterministicUUID("node-a", i)})
	}
	return devices
}

func TestWriteGolden(t *testing.T) {
	testCases := map[string]struct {
		devNodes []string
		requests map[string][]gpu.Device
	}{
		"one-request-one-gpu": {
			devNodes: []string{"nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"},
			requests: map[string][]gpu.Device{"container-0-request-0": gpus(1)},
		},
		"two-requests-unsorted-gpus": {
			devNodes: []string{"nvidia0", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm"},
			requests: map[string][]gpu.Device{
				"container-1-request-0": gpus(3, 2),
				"container-0-request-0": gpus(0),
			},
		},
		"no-device-nodes-on-host": {
			requests: map[string][]gpu.Device{"gpu": gpus(0, 1)},
		},
		"subrequest-name": {
			devNodes: []string{"nvidia5"},
			requests: map[string][]gpu.Device{"gpu/large": gpus(5)},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			w := &Writer{Root: t.TempDir(), DevRoot: fakeDevRoot(t, tc.devNodes...)}
			const claimUID = "6a3c1f0e-93a4-4a5c-9f59-2b1c0c9a7d11"
			ids, err := w.Write(claimUID, tc.requests)
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := os.ReadFile(w.SpecPath(claimUID))
			if err != nil {
				t.Fatal(err)
			}

			golden := filepath.Join("testdata", name+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/gpudriver/cdi -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("spec differs from %s:\n%s", golden, got)
			}

			// The spec must be one that the CDI library (as used by
			// containerd) accepts, and every returned ID must name one of
			// its devices.
			if _, err := cdi.ReadSpec(w.SpecPath(claimUID), 0); err != nil {
				t.Fatalf("CDI rejects the spec: %v", err)
			}
			spec, err := cdi.ParseSpec(got)
			if err != nil {
				t.Fatalf("CDI cannot parse the spec: %v", err)
			}
			for request := range tc.requests {
				id, ok := ids[request]
				if !ok || !strings.HasPrefix(id, Vendor+"/"+Class+"=") {
					t.Errorf("request %q: CDI ID %q", request, id)
				}
			}
			if len(spec.Devices) != len(tc.requests) {
				t.Errorf("%d CDI devices for %d requests", len(spec.Devices), len(tc.requests))
			}
		})
	}
}

func TestGPUEnvName(t *testing.T) {
	testCases := map[string]struct{ uuid, want string }{
		"GPU UUID":         {uuid: "GPU-27caaf52-4193-4da6-af70-f0131ed0712b", want: "DRAEXT_GPU_GPU_27CAAF52_4193_4DA6_AF70_F0131ED0712B"},
		"MIG UUID":         {uuid: "MIG-1a2b3c4d-0000-5555-aaaa-ffffffffffff", want: "DRAEXT_GPU_MIG_1A2B3C4D_0000_5555_AAAA_FFFFFFFFFFFF"},
		"already upper":    {uuid: "GPU-ABC123", want: "DRAEXT_GPU_GPU_ABC123"},
		"other characters": {uuid: "a.b/c:d e_f", want: "DRAEXT_GPU_A_B_C_D_E_F"},
		"non-ASCII":        {uuid: "gpu-ä", want: "DRAEXT_GPU_GPU__"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := GPUEnvName(tc.uuid)
			if got != tc.want {
				t.Errorf("GPUEnvName(%q) = %q, want %q", tc.uuid, got, tc.want)
			}
			if !strings.HasPrefix(got, GPUEnvPrefix) {
				t.Errorf("GPUEnvName(%q) = %q lacks the prefix %s", tc.uuid, got, GPUEnvPrefix)
			}
		})
	}
}

func TestWriteIsIdempotentAndRemove(t *testing.T) {
	w := &Writer{Root: filepath.Join(t.TempDir(), "cdi"), DevRoot: fakeDevRoot(t, "nvidia0")}
	const claimUID = "claim-1"
	requests := map[string][]gpu.Device{"gpu": gpus(0)}
	first, err := w.Write(claimUID, requests)
	if err != nil {
		t.Fatal(err)
	}
	data1, _ := os.ReadFile(w.SpecPath(claimUID))
	second, err := w.Write(claimUID, requests)
	if err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(w.SpecPath(claimUID))
	if first["gpu"] != second["gpu"] || string(data1) != string(data2) {
		t.Error("writing a claim twice gives different results")
	}
	entries, _ := os.ReadDir(w.Root)
	if len(entries) != 1 {
		t.Errorf("CDI directory holds %d files, want only the spec", len(entries))
	}
	if err := w.Remove(claimUID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.SpecPath(claimUID)); !os.IsNotExist(err) {
		t.Errorf("spec still there after Remove: %v", err)
	}
	if err := w.Remove(claimUID); err != nil {
		t.Errorf("removing an unknown claim: %v", err)
	}
}

func TestWriteRejects(t *testing.T) {
	w := &Writer{Root: t.TempDir()}
	testCases := map[string]struct {
		claimUID string
		requests map[string][]gpu.Device
		wantErr  string
	}{
		"no claim UID":         {requests: map[string][]gpu.Device{"gpu": gpus(0)}, wantErr: "claim UID must not be empty"},
		"no requests":          {claimUID: "c", wantErr: "no devices to write"},
		"request with no GPUs": {claimUID: "c", requests: map[string][]gpu.Device{"gpu": nil}, wantErr: `request "gpu" has no devices`},
		"GPU without UUID":     {claimUID: "c", requests: map[string][]gpu.Device{"gpu": {{Index: 3}}}, wantErr: `request "gpu": GPU 3 has no UUID`},
		"two UUIDs, one variable": {
			claimUID: "c",
			requests: map[string][]gpu.Device{"a": {{Index: 0, UUID: "GPU-ab"}}, "b": {{Index: 1, UUID: "gpu_ab"}}},
			wantErr:  `request "b": GPUs GPU-ab and gpu_ab both map to variable DRAEXT_GPU_GPU_AB`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, err := w.Write(tc.claimUID, tc.requests)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
