// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// maxDevices bounds --devices: one ResourceSlice holds at most 128 devices.
const maxDevices = 128

// driver implements kubeletplugin.DRAPlugin for the mock GPUs of one node.
type driver struct {
	name    string
	node    string
	devices []string
	cdi     cdiWriter
	// fatal stops the driver after an error that retrying cannot fix.
	fatal context.CancelCauseFunc
}

var _ kubeletplugin.DRAPlugin = &driver{}

// deviceNames are the names of n mock GPUs: gpu-0, gpu-1, ...
func deviceNames(n int) []string {
	names := make([]string, 0, n)
	for i := range n {
		names = append(names, "gpu-"+strconv.Itoa(i))
	}
	return names
}

// driverResources is what the driver publishes: one pool named after the
// node with one slice of n mock GPUs. The attribute library names the
// version of k8s.io/dynamic-resource-allocation the driver was built with.
func driverResources(node string, n int, library string) resourceslice.DriverResources {
	devices := make([]resourceapi.Device, 0, n)
	for i, name := range deviceNames(n) {
		devices = append(devices, resourceapi.Device{
			Name: name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				"index":   {IntValue: ptr.To(int64(i))},
				"model":   {StringValue: ptr.To("mock")},
				"library": {StringValue: ptr.To(library)},
			},
		})
	}
	return resourceslice.DriverResources{
		Pools: map[string]resourceslice.Pool{
			node: {Slices: []resourceslice.Slice{{Devices: devices}}},
		},
	}
}

// PrepareResourceClaims writes a CDI spec per claim; the helper has fetched
// the claims and checked that they are allocated.
func (d *driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	result := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		result[claim.UID] = d.prepare(ctx, claim)
	}
	return result, nil
}

func (d *driver) prepare(ctx context.Context, claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	logger := klog.FromContext(ctx)
	allocated, err := d.allocatedDevices(claim)
	if err != nil {
		return kubeletplugin.PrepareResult{Err: err}
	}
	names := make([]string, 0, len(allocated))
	for _, a := range allocated {
		names = append(names, a.device)
	}
	ids, err := d.cdi.write(claim.UID, names)
	if err != nil {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s: %w", klog.KObj(claim), err)}
	}
	var result kubeletplugin.PrepareResult
	for _, a := range allocated {
		result.Devices = append(result.Devices, kubeletplugin.Device{
			Requests:     []string{a.request},
			PoolName:     d.node,
			DeviceName:   a.device,
			CDIDeviceIDs: []string{ids[a.device]},
		})
	}
	logger.Info("Prepared claim", "claim", klog.KObj(claim), "uid", claim.UID, "devices", names)
	return result
}

// allocation is one device of a claim's allocation and the request it
// serves.
type allocation struct {
	request string
	device  string
}

// allocatedDevices are the devices of this driver on this node in the claim's
// allocation, in its order. Another driver's results are that driver's.
func (d *driver) allocatedDevices(claim *resourceapi.ResourceClaim) ([]allocation, error) {
	if claim.Status.Allocation == nil {
		return nil, fmt.Errorf("claim %s is not allocated", klog.KObj(claim))
	}
	var out []allocation
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.name {
			continue
		}
		if r.Pool != d.node {
			return nil, fmt.Errorf("claim %s: device %s/%s is in the pool of another node than %s", klog.KObj(claim), r.Pool, r.Device, d.node)
		}
		if !slices.Contains(d.devices, r.Device) {
			return nil, fmt.Errorf("claim %s: device %s is not one of the %d devices of node %s", klog.KObj(claim), r.Device, len(d.devices), d.node)
		}
		out = append(out, allocation{request: r.Request, device: r.Device})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("claim %s has no device of driver %s", klog.KObj(claim), d.name)
	}
	return out, nil
}

// UnprepareResourceClaims removes the claims' CDI specs; a claim without
// one is not an error.
func (d *driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	logger := klog.FromContext(ctx)
	result := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		result[claim.UID] = d.cdi.remove(claim.UID)
		logger.Info("Unprepared claim", "claim", claim.NamespacedName, "uid", claim.UID, "err", result[claim.UID])
	}
	return result, nil
}

// HandleError logs background errors (publishing slices, the gRPC servers)
// and stops the driver on those the helper does not call recoverable.
func (d *driver) HandleError(ctx context.Context, err error, msg string) {
	runtime.HandleErrorWithContext(ctx, err, msg)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) && d.fatal != nil {
		d.fatal(fmt.Errorf("%s: %w", msg, err))
	}
}
