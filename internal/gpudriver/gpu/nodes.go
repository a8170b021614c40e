// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"fmt"
	"os"
	"path/filepath"
)

// ControlDeviceNodes are the device nodes that every container using a GPU
// needs besides the GPU's own /dev/nvidia<minor>.
var ControlDeviceNodes = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}

// DeviceNode is the device node of a GPU.
func (d Device) DeviceNode() string {
	return fmt.Sprintf("/dev/nvidia%d", d.Minor)
}

// ExistingNodes returns those of paths (absolute, e.g. /dev/nvidia0) that
// exist under devRoot ("" means "/"). A node without GPUs (a mock) has none,
// and only the environment variable reaches the container.
func ExistingNodes(devRoot string, paths ...string) []string {
	if devRoot == "" {
		devRoot = "/"
	}
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(devRoot, p)); err == nil {
			out = append(out, p)
		}
	}
	return out
}
