// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package testutil holds helpers shared by the example driver's tests.
package testutil

import (
	"os"
	"testing"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// GPUs returns n GPUs of a node whose UUIDs are derived from seed, the way
// the mock NVML derives them; minor numbers equal the indexes.
func GPUs(seed string, n int) []gpu.Device {
	devices := make([]gpu.Device, 0, n)
	for i := 0; i < n; i++ {
		devices = append(devices, gpu.Device{Index: i, Minor: i, UUID: gpu.DeterministicUUID(seed, i)})
	}
	return devices
}

// SocketDir returns a directory for unix sockets, removed after the test.
// Socket paths are limited to 108 bytes, which t.TempDir() can exceed.
func SocketDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
