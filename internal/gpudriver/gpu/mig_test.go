// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

func TestMIGParent(t *testing.T) {
	lib := mockServer(t, "dgxa100")
	migs, err := AddMockMIGDevices(lib, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	parent := DeterministicUUID("node-a", 3)
	testCases := map[string]struct {
		id, want, wantErr string
	}{
		"first MIG device":      {id: migs[0], want: parent},
		"second MIG device":     {id: migs[1], want: parent},
		"unknown MIG device":    {id: MockMIGUUID(parent, 2), wantErr: "NVML DeviceGetHandleByUUID(" + MockMIGUUID(parent, 2) + ")"},
		"a whole GPU":           {id: "MIG-" + strings.TrimPrefix(parent, "GPU-"), wantErr: "NVML DeviceGetHandleByUUID"},
		"not a MIG device UUID": {id: parent, wantErr: "is not a MIG device UUID"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := MIGParent(lib, tc.id)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("MIGParent(%s) = %q, %v; want an error containing %q", tc.id, got, err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("MIGParent(%s) = %q, %v; want %s", tc.id, got, err, tc.want)
			}
		})
	}

	// The GPU keeps its place in discovery; its MIG devices are listed
	// through it, in MIG mode.
	_, ctx := ktesting.NewTestContext(t)
	devices, err := Discover(ctx, lib)
	if err != nil || len(devices) != 8 || devices[3].UUID != parent {
		t.Fatalf("Discover with MIG devices: %v, %v", devices, err)
	}
	dev := lib.Devices[3]
	if mode, _, _ := dev.GetMigMode(); mode != 1 {
		t.Errorf("MIG mode of GPU 3 = %d, want 1", mode)
	}
	if n, _ := dev.GetMaxMigDeviceCount(); n != 2 {
		t.Errorf("MIG devices of GPU 3 = %d, want 2", n)
	}
	if mig, _ := dev.GetMigDeviceHandleByIndex(1); mig == nil {
		t.Error("no MIG device 1 on GPU 3")
	} else if uuid, _ := mig.GetUUID(); uuid != migs[1] {
		t.Errorf("MIG device 1 of GPU 3 = %s, want %s", uuid, migs[1])
	}
}
