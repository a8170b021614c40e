// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package podresources

import (
	"maps"
	"testing"
)

func TestDevicePluginHolders(t *testing.T) {
	containers := []Container{
		{Namespace: "ns1", Pod: "dp", Container: "app", Devices: []Device{
			{Resource: "nvidia.com/gpu", IDs: []string{"GPU-a", "GPU-b"}},
			{Resource: "example.com/nic", IDs: []string{"eth0"}},
		}},
		{Namespace: "ns1", Pod: "dp", Container: "sidecar", Devices: []Device{{Resource: "nvidia.com/gpu", IDs: []string{"GPU-c"}}}},
		{Namespace: "ns2", Pod: "twice", Container: "app", Devices: []Device{{Resource: "nvidia.com/gpu", IDs: []string{"GPU-a"}}}},
		{Namespace: "ns2", Pod: "dra", Container: "app", Dynamic: []DynamicDevice{{Claim: "c", Driver: "gpu.draext.dev", Pool: "node-1", Device: "gpu-4"}}},
	}
	testCases := map[string]struct {
		containers []Container
		resource   string
		want       map[string]string
	}{
		"device-plugin GPUs of every container; the first holder of a device listed twice": {
			containers: containers, resource: "nvidia.com/gpu",
			want: map[string]string{"GPU-a": "ns1/dp/app", "GPU-b": "ns1/dp/app", "GPU-c": "ns1/dp/sidecar"},
		},
		"another resource":              {containers: containers, resource: "example.com/nic", want: map[string]string{"eth0": "ns1/dp/app"}},
		"DRA devices are never counted": {containers: containers[3:], resource: "nvidia.com/gpu", want: map[string]string{}},
		"no containers":                 {resource: "nvidia.com/gpu", want: map[string]string{}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if got := DevicePluginHolders(tc.containers, tc.resource); !maps.Equal(got, tc.want) {
				t.Errorf("DevicePluginHolders(%q) = %v, want %v", tc.resource, got, tc.want)
			}
		})
	}
}
