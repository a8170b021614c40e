// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package gpu discovers NVIDIA GPUs through NVML (github.com/NVIDIA/go-nvml):
// the real libnvidia-ml.so.1 on a GPU node, or an in-process mock server
// (8x A100, 8x H100, ...) with deterministic UUIDs for tests and demos.
package gpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"
)

// Device is what the driver publishes and prepares for one GPU.
type Device struct {
	// Index is the NVML device index.
	Index int
	// Minor is the minor number of /dev/nvidia<Minor>.
	Minor int
	// UUID is the GPU UUID, e.g. GPU-2f3b....
	UUID string
	// ProductName is the marketing name, e.g. "NVIDIA A100-SXM4-40GB".
	ProductName string
	// Architecture is the lower-case architecture name, e.g. "ampere".
	Architecture string
	// DriverVersion is the kernel driver version of the node.
	DriverVersion string
	// CUDAComputeCapability is "<major>.<minor>", e.g. "8.0".
	CUDAComputeCapability string
	// MemoryBytes is the total memory of the GPU.
	MemoryBytes uint64
}

// NVMLError is an NVML call that failed.
type NVMLError struct {
	// Call names the NVML function, and the device where there is one.
	Call string
	// Return is NVML's return code.
	Return nvml.Return
}

func (e *NVMLError) Error() string {
	return fmt.Sprintf("NVML %s: %s", e.Call, nvml.ErrorString(e.Return))
}

func check(call string, ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	return &NVMLError{Call: call, Return: ret}
}

// Discover initializes lib, lists every GPU with its attributes and shuts
// NVML down again. Any failing NVML call fails the discovery with an error
// that names the call: publishing half a node is worse than publishing none.
func Discover(ctx context.Context, lib nvml.Interface) (devices []Device, err error) {
	logger := klog.FromContext(ctx)
	if err := check("Init", lib.Init()); err != nil {
		return nil, err
	}
	defer func() {
		if shutdownErr := check("Shutdown", lib.Shutdown()); shutdownErr != nil {
			devices, err = nil, errors.Join(err, shutdownErr)
		}
	}()

	driverVersion, ret := lib.SystemGetDriverVersion()
	if err := check("SystemGetDriverVersion", ret); err != nil {
		return nil, err
	}
	count, ret := lib.DeviceGetCount()
	if err := check("DeviceGetCount", ret); err != nil {
		return nil, err
	}
	for i := 0; i < count; i++ {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if err := check(fmt.Sprintf("DeviceGetHandleByIndex(%d)", i), ret); err != nil {
			return nil, err
		}
		d, err := describe(i, dev)
		if err != nil {
			return nil, err
		}
		d.DriverVersion = driverVersion
		logger.V(2).Info("Discovered GPU", "index", d.Index, "uuid", d.UUID, "product", d.ProductName)
		devices = append(devices, d)
	}
	return devices, nil
}

func describe(index int, dev nvml.Device) (Device, error) {
	d := Device{Index: index}
	call := func(name string) string { return fmt.Sprintf("device %d: %s", index, name) }
	var ret nvml.Return
	if d.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return d, check(call("GetUUID"), ret)
	}
	if d.ProductName, ret = dev.GetName(); ret != nvml.SUCCESS {
		return d, check(call("GetName"), ret)
	}
	if d.Minor, ret = dev.GetMinorNumber(); ret != nvml.SUCCESS {
		return d, check(call("GetMinorNumber"), ret)
	}
	arch, ret := dev.GetArchitecture()
	if ret != nvml.SUCCESS {
		return d, check(call("GetArchitecture"), ret)
	}
	d.Architecture = architectureName(arch)
	major, minor, ret := dev.GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return d, check(call("GetCudaComputeCapability"), ret)
	}
	d.CUDAComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return d, check(call("GetMemoryInfo"), ret)
	}
	d.MemoryBytes = mem.Total
	return d, nil
}

// architectureName maps NVML's architecture enum to a stable attribute value.
func architectureName(arch nvml.DeviceArchitecture) string {
	switch arch {
	case nvml.DEVICE_ARCH_KEPLER:
		return "kepler"
	case nvml.DEVICE_ARCH_MAXWELL:
		return "maxwell"
	case nvml.DEVICE_ARCH_PASCAL:
		return "pascal"
	case nvml.DEVICE_ARCH_VOLTA:
		return "volta"
	case nvml.DEVICE_ARCH_TURING:
		return "turing"
	case nvml.DEVICE_ARCH_AMPERE:
		return "ampere"
	case nvml.DEVICE_ARCH_ADA:
		return "ada"
	case nvml.DEVICE_ARCH_HOPPER:
		return "hopper"
	case nvml.DEVICE_ARCH_BLACKWELL:
		return "blackwell"
	case nvml.DEVICE_ARCH_RUBIN:
		return "rubin"
	}
	return fmt.Sprintf("unknown-%d", arch)
}
