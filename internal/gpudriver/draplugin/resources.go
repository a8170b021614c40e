// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package draplugin is the DRA side of the example NVIDIA GPU driver: it
// publishes the node's GPUs in ResourceSlices (through the resourceslice
// controller of k8s.io/dynamic-resource-allocation, started again when the
// slices are deleted) and prepares the ResourceClaims that the scheduler
// allocated from them, through its kubeletplugin helper.
package draplugin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// DefaultDriverName is the DRA driver name. It is deliberately not NVIDIA's
// production driver name (gpu.nvidia.com), so both can run in one cluster.
const DefaultDriverName = "gpu.draext.dev"

// SliceDeviceName is the name of a GPU as a device of the ResourceSlice (the
// device name that allocations and PodResources report): stable across
// restarts because it is derived from the NVML index. It is not the name of
// the GPU's CDI device; see cdi.SpecDeviceName.
func SliceDeviceName(d gpu.Device) string {
	return "gpu-" + strconv.Itoa(d.Index)
}

// Resources describes the GPUs of a node as one pool, named after the node,
// with one ResourceSlice. GPUs in leaveOut (by UUID: unhealthy ones, and
// those device-plugin containers hold) are left out, so the scheduler does
// not allocate them; an empty slice still tells that the driver runs.
func Resources(nodeName string, devices []gpu.Device, leaveOut map[string]bool) resourceslice.DriverResources {
	slice := resourceslice.Slice{Devices: []resourceapi.Device{}}
	for _, d := range devices {
		if leaveOut[d.UUID] {
			continue
		}
		slice.Devices = append(slice.Devices, apiDevice(d))
	}
	return resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{nodeName: {Slices: []resourceslice.Slice{slice}}}}
}

func apiDevice(d gpu.Device) resourceapi.Device {
	attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"uuid":         {StringValue: ptr.To(d.UUID)},
		"productName":  {StringValue: ptr.To(d.ProductName)},
		"architecture": {StringValue: ptr.To(d.Architecture)},
		"index":        {IntValue: ptr.To(int64(d.Index))},
	}
	if v, ok := semver(d.DriverVersion); ok {
		attrs["driverVersion"] = resourceapi.DeviceAttribute{VersionValue: ptr.To(v)}
	}
	if v, ok := semver(d.CUDAComputeCapability); ok {
		attrs["cudaComputeCapability"] = resourceapi.DeviceAttribute{VersionValue: ptr.To(v)}
	}
	return resourceapi.Device{
		Name: SliceDeviceName(d),
		Basic: &resourceapi.BasicDevice{
			Attributes: attrs,
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: *resource.NewQuantity(int64(d.MemoryBytes), resource.BinarySI)},
			},
		},
	}
}

var numericParts = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,2}$`)

// semver turns NVIDIA's dotted versions ("550.54.15", "535.104.05", "8.0")
// into semantic versions that CEL's semver() accepts: three parts, no
// leading zeros. Anything else is not published as a version.
func semver(v string) (string, bool) {
	if !numericParts.MatchString(v) {
		return "", false
	}
	parts := strings.Split(v, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return "", false
		}
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, "."), true
}
