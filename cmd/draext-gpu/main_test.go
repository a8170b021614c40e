// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/draext/draext/internal/gpudriver/nodelock"
)

func TestRunRefuses(t *testing.T) {
	testCases := map[string]struct {
		opts options
		// heldBy, when set, is the mode that holds the node's GPU lock.
		heldBy string
		want   string
	}{
		"unknown mode":       {opts: options{mode: "both", nodeName: "n"}, want: `--mode="both": use dra or device-plugin`},
		"no node name":       {opts: options{mode: "dra", nvml: "mock:dgxa100"}, want: "--node-name (or $DRAEXT_FLAG_NODE_NAME, or $NODE_NAME) is required"},
		"unknown profile":    {opts: options{mode: "dra", nodeName: "n", nvml: "mock:dgx1"}, want: `unknown mock GPU profile "dgx1"`},
		"bad nvml value":     {opts: options{mode: "dra", nodeName: "n", nvml: "fake"}, want: `invalid --nvml value "fake"`},
		"no NVML library":    {opts: options{mode: "dra", nodeName: "n", nvml: "real", driverRoot: "/nonexistent"}, want: "libnvidia-ml.so.1 not found under driver root"},
		"other mode running": {opts: options{mode: "dra", nodeName: "n", nvml: "mock:dgxa100"}, heldBy: "device-plugin", want: "already served by the device-plugin mode"},
		"not in a pod":       {opts: options{mode: "dra", nodeName: "n", nvml: "mock:dgxa100", sliceCheckPeriod: time.Minute}, want: "pass --kubeconfig to run as a host process"},
		"no slice check":     {opts: options{mode: "dra", nodeName: "n", nvml: "mock:dgxa100"}, want: "--slice-check-period=0s: must be positive"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			tc.opts.stateDir = t.TempDir()
			if tc.heldBy != "" {
				l, err := nodelock.Acquire(filepath.Join(tc.opts.stateDir, "gpus.lock"), tc.heldBy)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = l.Release() }()
			}
			err := run(ctx, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestKubeletAnswer(t *testing.T) {
	gpu := func(ids ...string) []*podresourcesv1.ContainerDevices {
		return []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: ids}}
	}
	resp := &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Namespace: "ns", Name: "dp", Containers: []*podresourcesv1.ContainerResources{
			{Name: "app", Devices: gpu("GPU-a::1", "0")},
			{Name: "side", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/nic", DeviceIds: []string{"eth0"}}}},
		}},
		{Namespace: "ns", Name: "cpu", Containers: []*podresourcesv1.ContainerResources{{Name: "app"}}},
		nil,
		{Namespace: "other", Name: "mig", Containers: []*podresourcesv1.ContainerResources{{Name: "app", Devices: gpu("MIG-b")}}},
	}}
	got := kubeletAnswer(resp, "nvidia.com/gpu")
	wantPods := map[string]bool{"ns/dp": true, "ns/cpu": true, "other/mig": true}
	wantHolders := map[string]string{"GPU-a::1": "ns/dp/app", "0": "ns/dp/app", "MIG-b": "other/mig/app"}
	if !maps.Equal(got.Pods, wantPods) || !maps.Equal(got.Holders, wantHolders) {
		t.Errorf("kubeletAnswer = %+v, want pods %v and holders %v", got, wantPods, wantHolders)
	}
}
