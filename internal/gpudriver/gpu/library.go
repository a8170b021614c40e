// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// MockPrefix starts a --nvml value that selects a mock server.
const MockPrefix = "mock:"

// mockProfiles are the simulated systems, 8 GPUs each.
var mockProfiles = map[string]func() *server.Server{
	"dgxa100": func() *server.Server { return dgxa100.New() },
	"dgxh100": func() *server.Server { return dgxh100.New() },
	"dgxh200": func() *server.Server { return dgxh200.New() },
	"dgxb200": func() *server.Server { return dgxb200.New() },
}

// MockProfiles lists the profile names accepted after "mock:".
func MockProfiles() []string {
	names := make([]string, 0, len(mockProfiles))
	for name := range mockProfiles {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// NewMock returns a mock NVML server of the named profile whose GPU UUIDs
// are derived from seed (the node name), so that every start of the driver
// on that node, and every test, sees the same devices.
func NewMock(profile, seed string) (nvml.Interface, error) {
	newServer, ok := mockProfiles[profile]
	if !ok {
		return nil, fmt.Errorf("unknown mock GPU profile %q: use one of %s", profile, strings.Join(MockProfiles(), ", "))
	}
	srv := newServer()
	for i, d := range srv.Devices {
		dev, ok := d.(*server.Device)
		if !ok {
			return nil, fmt.Errorf("mock profile %q: device %d has unexpected type %T", profile, i, d)
		}
		dev.UUID = DeterministicUUID(seed, i)
		// A whole GPU; AddMockMIGDevices adds MIG devices.
		dev.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	}
	addMockEvents(srv)
	return srv, nil
}

// DeterministicUUID derives a GPU UUID in NVIDIA's format from a seed and an
// index.
func DeterministicUUID(seed string, index int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("draext-mock-gpu/%s/%d", seed, index)))
	b := sum[:16]
	b[6] = (b[6] & 0x0f) | 0x40 // version 4 layout, like real GPU UUIDs
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Open selects the NVML implementation named by spec:
//
//	""  or "real"   libnvidia-ml.so.1 from driverRoot (or the loader's path)
//	"mock:<profile>" an in-process mock server, UUIDs derived from seed
//
// A missing library is an error that says how to fix it; there is no silent
// fallback to a mock.
func Open(spec, driverRoot, seed string) (nvml.Interface, error) {
	switch {
	case strings.HasPrefix(spec, MockPrefix):
		return NewMock(strings.TrimPrefix(spec, MockPrefix), seed)
	case spec == "" || spec == "real":
		lib := findLibrary(driverRoot)
		if lib == "" {
			return nil, fmt.Errorf("libnvidia-ml.so.1 not found under driver root %q: install the NVIDIA driver, set --driver-root, or use --nvml=mock:<profile> (%s)",
				driverRoot, strings.Join(MockProfiles(), ", "))
		}
		return nvml.New(nvml.WithLibraryPath(lib)), nil
	}
	return nil, fmt.Errorf("invalid --nvml value %q: use real or mock:<profile> (%s)", spec, strings.Join(MockProfiles(), ", "))
}

// libraryDirs are where distributions install libnvidia-ml.so.1, relative to
// the driver root.
var libraryDirs = []string{
	"usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib", "lib/x86_64-linux-gnu", "lib64",
	"usr/lib/aarch64-linux-gnu", "lib/aarch64-linux-gnu",
}

func findLibrary(driverRoot string) string {
	if driverRoot == "" {
		driverRoot = "/"
	}
	for _, dir := range libraryDirs {
		p := filepath.Join(driverRoot, dir, "libnvidia-ml.so.1")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
