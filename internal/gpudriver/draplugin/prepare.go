// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"fmt"
	"sort"

	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// allocatedGPUs returns, for each request of the claim that this driver
// serves from pool, the UUIDs of the allocated GPUs, plus the devices in the
// order of the allocation results. Results of other drivers or pools are not
// ours and are skipped. A device that this node does not have is an error:
// the claim was allocated for another node, or the GPU disappeared.
func allocatedGPUs(claim *resourceapi.ResourceClaim, driverName, pool string, byName map[string]gpu.Device) (map[string][]string, []resourceapi.DeviceRequestAllocationResult, error) {
	if claim.Status.Allocation == nil {
		return nil, nil, fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
	}
	requests := map[string][]string{}
	var results []resourceapi.DeviceRequestAllocationResult
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != driverName || r.Pool != pool {
			continue
		}
		d, ok := byName[r.Device]
		if !ok {
			return nil, nil, fmt.Errorf("claim %s/%s, request %q: device %q is not a GPU of pool %q", claim.Namespace, claim.Name, r.Request, r.Device, pool)
		}
		requests[r.Request] = append(requests[r.Request], d.UUID)
		results = append(results, r)
	}
	return requests, results, nil
}

// prepareResult tells the kubelet which CDI device serves each allocated GPU:
// the CDI device of its request, which carries every GPU of that request.
func prepareResult(results []resourceapi.DeviceRequestAllocationResult, cdiIDs map[string]string) kubeletplugin.PrepareResult {
	devices := make([]kubeletplugin.Device, 0, len(results))
	for _, r := range results {
		devices = append(devices, kubeletplugin.Device{
			Requests:     []string{r.Request},
			PoolName:     r.Pool,
			DeviceName:   r.Device,
			CDIDeviceIDs: []string{cdiIDs[r.Request]},
		})
	}
	sort.SliceStable(devices, func(i, j int) bool { return devices[i].DeviceName < devices[j].DeviceName })
	return kubeletplugin.PrepareResult{Devices: devices}
}
