// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestBuildNodesReport(t *testing.T) {
	t.Parallel()
	draext := "v1.33.13-draext.1"
	gateOnState := gateState{Name: gateName, State: gateOn, Stage: "ALPHA"}
	gpuClass := testClass("gpu", gpuName, t0, a100...)
	// A node selector on the label gpu=shared.
	shared := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "gpu", Operator: v1.NodeSelectorOpIn, Values: []string{"shared"}},
	}}}}
	testCases := map[string]struct {
		in       nodesInput
		want     []string
		warnings []string
	}{
		"DRA node: CEL selectors count matching devices only, claims allocate": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("n1", nil, nil)},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n1", "A100", "A100", "T4", "A100")},
				claims:  []resourceClaim{allocatedClaim("c1", "n1", "n1-gpu-0"), allocatedClaim("t4", "n1", "n1-gpu-2")},
			},
			want: []string{
				"n1 deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=3 alloc=1 free=2 dra=1/3 both=false conflicts=",
				"n1 nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=3 alloc=1 free=2 dra=1/3 both=false conflicts=",
			},
		},
		"admin access does not take a device; unallocated claims count nothing": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("n1", nil, nil)},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n1", "A100", "A100")},
				claims: []resourceClaim{
					{Namespace: "ns", Name: "admin", Results: []allocationResult{{Driver: testDriver, Pool: "n1", Device: "n1-gpu-0", AdminAccess: true}}},
					{Namespace: "ns", Name: "pending"},
				},
			},
			want: []string{
				"n1 deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=2 alloc=0 free=2 dra=0/2 both=false conflicts=",
				"n1 nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=2 alloc=0 free=2 dra=0/2 both=false conflicts=",
			},
		},
		"allNodes and nodeSelector slices, perDeviceNodeSelection": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("a", map[string]string{"gpu": "shared"}, nil), testNode("b", nil, nil)},
				classes: []deviceClass{testClass("gpu", "", t0, a100...)},
				slices: []resourceSlice{
					{Name: "all", Driver: testDriver, Pool: "all", AllNodes: true, Devices: []device{testDevice("all-0", "A100")}},
					{Name: "sel", Driver: testDriver, Pool: "sel", NodeSelector: shared, Devices: []device{testDevice("sel-0", "A100"), testDevice("sel-1", "A100")}},
					{Name: "per", Driver: testDriver, Pool: "per", PerDeviceNodeSelection: true, Devices: []device{
						func() device { d := testDevice("per-b", "A100"); d.NodeName = "b"; return d }(),
						func() device { d := testDevice("per-all", "A100"); d.AllNodes = true; return d }(),
						func() device { d := testDevice("per-sel", "A100"); d.NodeSelector = shared; return d }(),
					}},
				},
				claims: []resourceClaim{allocatedClaim("c", "sel", "sel-1")},
			},
			want: []string{
				"a deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=5 alloc=1 free=4 dra=1/5 both=false conflicts=",
				"b deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=3 alloc=0 free=3 dra=0/3 both=false conflicts=",
			},
		},
		"only the newest generation of a pool counts": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("n1", nil, nil)},
				classes: []deviceClass{gpuClass},
				slices: []resourceSlice{
					func() resourceSlice {
						s := nodeSlice("n1", "A100", "A100", "A100")
						s.Name, s.Generation = "old", 1
						return s
					}(),
					func() resourceSlice { s := nodeSlice("n1", "A100"); s.Name, s.Generation = "new", 2; return s }(),
				},
			},
			want: []string{
				"n1 deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n1 nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
			},
		},
		"device plugin node: node status and running pods' requests, both flagged": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("dp", nil, map[string]int64{gpuName: 4, "example.com/fpga": 2})},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("dp", "A100")},
				pods: []v1.Pod{
					testPod("running", "dp", v1.PodRunning, map[string]int64{gpuName: 2}),
					testPod("pending", "dp", v1.PodPending, map[string]int64{gpuName: 1, "example.com/fpga": 1}),
					testPod("done", "dp", v1.PodSucceeded, map[string]int64{gpuName: 1}),
					testPod("failed", "dp", v1.PodFailed, map[string]int64{gpuName: 1}),
					testPod("elsewhere", "other", v1.PodRunning, map[string]int64{gpuName: 1}),
					func() v1.Pod {
						p := testPod("through-dra", "dp", v1.PodRunning, map[string]int64{gpuName: 1})
						p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "c", RequestMappings: []v1.ContainerExtendedResourceRequest{
							{ContainerName: "app", ResourceName: gpuName, RequestName: "container-0-request-0"},
						}}
						return p
					}(),
				},
			},
			want: []string{
				"dp deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"dp example.com/fpga DevicePlugin class= drivers= cap=2 alloc=1 free=1 dra=0/0 both=false conflicts=",
				"dp nvidia.com/gpu DevicePlugin class=gpu drivers=gpu.example.com cap=4 alloc=3 free=1 dra=0/1 both=true conflicts=",
			},
		},
		"allocatable 0 goes to DRA on draext": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("n", nil, map[string]int64{gpuName: 0})},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n", "A100", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=2 alloc=0 free=2 dra=0/2 both=false conflicts=",
				"n nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=2 alloc=0 free=2 dra=0/2 both=false conflicts=",
			},
		},
		"allocatable 0 goes to DRA on 1.35": {
			in: nodesInput{
				serverVersion: "v1.35.2", gate: gateOnState,
				nodes:   []v1.Node{testNode("n", nil, map[string]int64{gpuName: 0})},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
			},
		},
		"allocatable 0 stays with the device plugin on 1.34": {
			in: nodesInput{
				serverVersion: "v1.34.3", gate: gateOnState,
				nodes:   []v1.Node{testNode("n", nil, map[string]int64{gpuName: 0})},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu DevicePlugin class=gpu drivers=gpu.example.com cap=0 alloc=0 free=0 dra=0/1 both=false conflicts=",
			},
		},
		"stock 1.33: device plugins only": {
			in: nodesInput{
				serverVersion: "v1.33.13", gate: gateState{Name: gateName, State: gateUnknown},
				nodes:   []v1.Node{testNode("n", nil, map[string]int64{gpuName: 2})},
				classes: []deviceClass{testClass("gpu", "", t0, a100...)},
				slices:  []resourceSlice{nodeSlice("n", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu None class=gpu drivers=gpu.example.com cap=0 alloc=0 free=0 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu DevicePlugin class= drivers= cap=2 alloc=0 free=2 dra=0/0 both=false conflicts=",
			},
		},
		"a 1.33 server whose class has extendedResourceName counts as patched": {
			in: nodesInput{
				serverVersion: "v1.33.13", gate: gateState{Name: gateName, State: gateUnknown},
				nodes:   []v1.Node{testNode("n", nil, nil)},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu DRA class=gpu drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
			},
		},
		"gate off: DRA serves nothing": {
			in: nodesInput{
				serverVersion: draext, gate: gateState{Name: gateName, State: gateOff, Stage: "ALPHA"},
				nodes:   []v1.Node{testNode("n", nil, nil)},
				classes: []deviceClass{gpuClass},
				slices:  []resourceSlice{nodeSlice("n", "A100")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/gpu None class=gpu drivers=gpu.example.com cap=0 alloc=0 free=0 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu None class=gpu drivers=gpu.example.com cap=0 alloc=0 free=0 dra=0/1 both=false conflicts=",
			},
		},
		"conflicts: the newest class wins, a tie goes to the smaller name": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes: []v1.Node{testNode("n", nil, nil)},
				classes: []deviceClass{
					testClass("old", gpuName, t0, a100...),
					testClass("new-b", gpuName, t0.Add(time.Hour), `device.driver == "gpu.example.com"`),
					testClass("new-a", gpuName, t0.Add(time.Hour), `device.attributes["gpu.example.com"].model == "T4"`),
				},
				slices: []resourceSlice{nodeSlice("n", "A100", "T4")},
			},
			want: []string{
				"n deviceclass.resource.kubernetes.io/new-a DRA class=new-a drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n deviceclass.resource.kubernetes.io/new-b DRA class=new-b drivers=gpu.example.com cap=2 alloc=0 free=2 dra=0/2 both=false conflicts=",
				"n deviceclass.resource.kubernetes.io/old DRA class=old drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=",
				"n nvidia.com/gpu DRA class=new-a drivers=gpu.example.com cap=1 alloc=0 free=1 dra=0/1 both=false conflicts=new-b,old",
			},
		},
		"explicit names show on nodes without devices; implicit names only where the class has devices": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes:   []v1.Node{testNode("empty", nil, nil)},
				classes: []deviceClass{gpuClass, testClass("fpga", "", t0)},
			},
			want: []string{
				"empty nvidia.com/gpu DRA class=gpu drivers= cap=0 alloc=0 free=0 dra=0/0 both=false conflicts=",
			},
		},
		"a selector that fails counts no device and warns": {
			in: nodesInput{
				serverVersion: draext, gate: gateOnState,
				nodes: []v1.Node{testNode("n", nil, nil)},
				classes: []deviceClass{
					testClass("broken", "", t0, `device.driver ==`),
					testClass("missing", "", t0, `device.attributes["gpu.example.com"].nosuch == "x"`),
				},
				slices: []resourceSlice{nodeSlice("n", "A100")},
			},
			warnings: []string{"DeviceClass broken: selector", "DeviceClass missing: selector"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			list := buildNodesReport(context.Background(), tc.in)
			var got []string
			for _, r := range list.Items {
				got = append(got, summary(r))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(list.Warnings) != len(tc.warnings) {
				t.Errorf("warnings = %q, want %d starting with %q", list.Warnings, len(tc.warnings), tc.warnings)
			}
			for i := range min(len(list.Warnings), len(tc.warnings)) {
				if !strings.HasPrefix(list.Warnings[i], tc.warnings[i]) {
					t.Errorf("warning %d = %q, want it to start with %q", i, list.Warnings[i], tc.warnings[i])
				}
			}
		})
	}
}

func TestDevicePluginRequests(t *testing.T) {
	t.Parallel()
	withInit := testPod("init", "n", v1.PodRunning, map[string]int64{gpuName: 1})
	withInit.Spec.InitContainers = []v1.Container{{Name: "setup", Resources: testPod("", "", "", map[string]int64{gpuName: 3}).Spec.Containers[0].Resources}}
	sidecar := testPod("sidecar", "n", v1.PodRunning, map[string]int64{gpuName: 1})
	sidecar.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: testPod("", "", "", map[string]int64{gpuName: 1}).Spec.Containers[0].Resources}}
	testCases := map[string]struct {
		pods []v1.Pod
		want int64
	}{
		"none":                                  {want: 0},
		"sum of containers":                     {pods: []v1.Pod{testPod("a", "n", v1.PodRunning, map[string]int64{gpuName: 2}), testPod("b", "n", v1.PodRunning, map[string]int64{gpuName: 1})}, want: 3},
		"an init container larger than the app": {pods: []v1.Pod{withInit}, want: 3},
		"a sidecar adds to the app":             {pods: []v1.Pod{sidecar}, want: 2},
		"other resources only":                  {pods: []v1.Pod{testPod("a", "n", v1.PodRunning, map[string]int64{"example.com/fpga": 2})}, want: 0},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var pods []*v1.Pod
			for i := range tc.pods {
				pods = append(pods, &tc.pods[i])
			}
			if got := devicePluginRequests(pods, gpuName); got != tc.want {
				t.Errorf("requests = %d, want %d", got, tc.want)
			}
		})
	}
}
