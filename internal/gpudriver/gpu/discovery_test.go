// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"k8s.io/klog/v2/ktesting"
)

var uuidRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func mockServer(t *testing.T, profile string) *server.Server {
	t.Helper()
	lib, err := NewMock(profile, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	return lib.(*server.Server)
}

func TestDiscoverMockProfiles(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		product, arch, cc string
		memoryGiB         uint64
	}{
		"dgxa100": {product: "A100-SXM4-40GB", arch: "ampere", cc: "8.0", memoryGiB: 40},
		"dgxh100": {product: "H100", arch: "hopper", cc: "9.0", memoryGiB: 80},
		"dgxh200": {product: "H200", arch: "hopper", cc: "9.0", memoryGiB: 141},
		"dgxb200": {product: "B200", arch: "blackwell", cc: "10.0", memoryGiB: 180},
	}
	for profile, want := range testCases {
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			_, ctx := ktesting.NewTestContext(t)
			devices, err := Discover(ctx, mockServer(t, profile))
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if len(devices) != 8 {
				t.Fatalf("got %d devices, want 8", len(devices))
			}
			seen := map[string]bool{}
			for i, d := range devices {
				if d.Index != i || d.Minor != i {
					t.Errorf("device %d: index %d minor %d", i, d.Index, d.Minor)
				}
				if !uuidRE.MatchString(d.UUID) || seen[d.UUID] {
					t.Errorf("device %d: UUID %q is malformed or repeated", i, d.UUID)
				}
				seen[d.UUID] = true
				if d.UUID != DeterministicUUID("node-a", i) {
					t.Errorf("device %d: UUID %q is not derived from the node name", i, d.UUID)
				}
				if !strings.Contains(d.ProductName, want.product) {
					t.Errorf("device %d: product %q, want it to contain %q", i, d.ProductName, want.product)
				}
				if d.Architecture != want.arch || d.CUDAComputeCapability != want.cc {
					t.Errorf("device %d: architecture %q cc %q, want %q %q", i, d.Architecture, d.CUDAComputeCapability, want.arch, want.cc)
				}
				if gib := d.MemoryBytes >> 30; gib != want.memoryGiB {
					t.Errorf("device %d: %d GiB, want %d", i, gib, want.memoryGiB)
				}
				if d.DriverVersion == "" {
					t.Errorf("device %d: no driver version", i)
				}
			}
		})
	}
}

func TestDeterministicUUID(t *testing.T) {
	t.Parallel()
	if first, again := DeterministicUUID("node-a", 0), DeterministicUUID("node-a", 0); first != again {
		t.Error("same seed and index give different UUIDs")
	}
	if DeterministicUUID("node-a", 0) == DeterministicUUID("node-b", 0) {
		t.Error("different nodes give the same UUID")
	}
	if DeterministicUUID("node-a", 0) == DeterministicUUID("node-a", 1) {
		t.Error("different indexes give the same UUID")
	}
}

func TestDiscoverErrors(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		break_  func(s *server.Server)
		wantErr string
		// wantShutdowns is how often NVML must be shut down: once after a
		// successful Init, never after a failed one.
		wantShutdowns int
	}{
		"init fails": {
			break_:        func(s *server.Server) { s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED } },
			wantErr:       "NVML Init: ",
			wantShutdowns: 0,
		},
		"driver version fails": {
			break_: func(s *server.Server) {
				s.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
			},
			wantErr:       "NVML SystemGetDriverVersion: ",
			wantShutdowns: 1,
		},
		"device count fails": {
			break_: func(s *server.Server) {
				s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
			},
			wantErr:       "NVML DeviceGetCount: ",
			wantShutdowns: 1,
		},
		"device handle fails": {
			break_: func(s *server.Server) {
				s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
			},
			wantErr:       "NVML DeviceGetHandleByIndex(0): ",
			wantShutdowns: 1,
		},
		"one device has no UUID": {
			break_: func(s *server.Server) {
				d := s.Devices[3].(*server.Device)
				d.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
			},
			wantErr:       "NVML device 3: GetUUID: ",
			wantShutdowns: 1,
		},
		"memory info fails": {
			break_: func(s *server.Server) {
				d := s.Devices[7].(*server.Device)
				d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_NOT_SUPPORTED }
			},
			wantErr:       "NVML device 7: GetMemoryInfo: ",
			wantShutdowns: 1,
		},
		"shutdown fails after success": {
			break_:        func(s *server.Server) { s.ShutdownFunc = func() nvml.Return { return nvml.ERROR_UNINITIALIZED } },
			wantErr:       "NVML Shutdown: ",
			wantShutdowns: 1,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, ctx := ktesting.NewTestContext(t)
			srv := mockServer(t, "dgxa100")
			tc.break_(srv)
			shutdowns := 0
			shutdown := srv.ShutdownFunc
			srv.ShutdownFunc = func() nvml.Return { shutdowns++; return shutdown() }

			devices, err := Discover(ctx, srv)
			var nvmlErr *NVMLError
			if err == nil || !errors.As(err, &nvmlErr) || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Fatalf("Discover error = %v, want an NVMLError starting with %q", err, tc.wantErr)
			}
			if devices != nil {
				t.Errorf("got %d devices with an error, want none", len(devices))
			}
			if shutdowns != tc.wantShutdowns {
				t.Errorf("NVML was shut down %d times, want %d", shutdowns, tc.wantShutdowns)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		spec, driverRoot string
		wantErr          string
	}{
		"mock":                  {spec: "mock:dgxh100"},
		"unknown mock profile":  {spec: "mock:dgx1", wantErr: `unknown mock GPU profile "dgx1": use one of dgxa100, dgxb200, dgxh100, dgxh200`},
		"missing real library":  {spec: "real", driverRoot: t.TempDir(), wantErr: "libnvidia-ml.so.1 not found under driver root"},
		"missing, default spec": {spec: "", driverRoot: t.TempDir(), wantErr: "or use --nvml=mock:<profile>"},
		"invalid spec":          {spec: "fake", wantErr: `invalid --nvml value "fake"`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lib, err := Open(tc.spec, tc.driverRoot, "node-a")
			if tc.wantErr == "" {
				if err != nil || lib == nil {
					t.Fatalf("Open(%q) = %v, %v", tc.spec, lib, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Open(%q) error = %v, want it to contain %q", tc.spec, err, tc.wantErr)
			}
		})
	}
}
