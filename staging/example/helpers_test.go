// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Builders of the objects the tests use, in the internal model and in the
// API versions.

const (
	testDriver = "gpu.example.com"
	gpuName    = "nvidia.com/gpu"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// a100 selects the example driver's A100 GPUs.
	a100 = []string{`device.driver == "gpu.example.com"`, `device.attributes["gpu.example.com"].model == "A100"`}
)

func testNode(name string, labels map[string]string, allocatable map[string]int64) v1.Node {
	n := v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if allocatable != nil {
		n.Status.Allocatable, n.Status.Capacity = v1.ResourceList{}, v1.ResourceList{}
		for k, v := range allocatable {
			n.Status.Allocatable[v1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
			n.Status.Capacity[v1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return n
}

func testClass(name, extendedResourceName string, created time.Time, selectors ...string) deviceClass {
	return deviceClass{Name: name, Created: created, ExtendedResourceName: extendedResourceName, Selectors: selectors}
}

// testDevice is a GPU with a model and a UUID.
func testDevice(name, model string) device {
	return device{
		Name: name,
		Attributes: map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute{
			"model": {StringValue: ptr.To(model)},
			"uuid":  {StringValue: ptr.To("GPU-" + name)},
		},
		Capacity: map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceCapacity{
			"memory": {Value: resource.MustParse("40Gi")},
		},
	}
}

// nodeSlice is a slice of the node's pool (named after the node), with
// devices "<node>-gpu-<i>" of the models.
func nodeSlice(node string, models ...string) resourceSlice {
	s := resourceSlice{Name: node + "-slice", Driver: testDriver, Pool: node, NodeName: node}
	for i, m := range models {
		s.Devices = append(s.Devices, testDevice(fmt.Sprintf("%s-gpu-%d", node, i), m))
	}
	return s
}

// allocatedClaim holds the devices of the pool (driver testDriver).
func allocatedClaim(name, pool string, devices ...string) resourceClaim {
	c := resourceClaim{Namespace: "default", Name: name, Requests: map[string]string{"container-0-request-0": "gpu"}}
	for _, d := range devices {
		c.Results = append(c.Results, allocationResult{Request: "container-0-request-0", Driver: testDriver, Pool: pool, Device: d})
	}
	return c
}

// testPod runs on the node; its container "app" requests the resources.
func testPod(name, node string, phase v1.PodPhase, requests map[string]int64) v1.Pod {
	list := v1.ResourceList{}
	for k, v := range requests {
		list[v1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{
			Name: "app", Resources: v1.ResourceRequirements{Requests: list, Limits: list},
		}}},
		Status: v1.PodStatus{Phase: phase},
	}
}

// summary is a row of the nodes report on one line, for comparisons.
func summary(r nodeResource) string {
	return fmt.Sprintf("%s %s %s class=%s drivers=%s cap=%d alloc=%d free=%d dra=%d/%d both=%v conflicts=%s",
		r.Node, r.ResourceName, r.ServedBy, r.DeviceClass, strings.Join(r.Drivers, ","), r.Capacity, r.Allocated, r.Free,
		r.DRAAllocated, r.DRADevices, r.Both, strings.Join(r.Conflicts, ","))
}

// API objects for the fake clientsets.

func v1beta2Class(name, extendedResourceName string, created time.Time, selectors ...string) *resourcev1beta2.DeviceClass {
	c := &resourcev1beta2.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
	if extendedResourceName != "" {
		c.Spec.ExtendedResourceName = ptr.To(extendedResourceName)
	}
	for _, s := range selectors {
		c.Spec.Selectors = append(c.Spec.Selectors, resourcev1beta2.DeviceSelector{CEL: &resourcev1beta2.CELDeviceSelector{Expression: s}})
	}
	return c
}

func v1beta2Slice(node string, models ...string) *resourcev1beta2.ResourceSlice {
	s := &resourcev1beta2.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-slice"},
		Spec: resourcev1beta2.ResourceSliceSpec{
			Driver: testDriver, NodeName: ptr.To(node),
			Pool: resourcev1beta2.ResourcePool{Name: node, ResourceSliceCount: 1},
		},
	}
	for i, m := range models {
		name := fmt.Sprintf("%s-gpu-%d", node, i)
		s.Spec.Devices = append(s.Spec.Devices, resourcev1beta2.Device{
			Name: name,
			Attributes: map[resourcev1beta2.QualifiedName]resourcev1beta2.DeviceAttribute{
				"model": {StringValue: ptr.To(m)},
				"uuid":  {StringValue: ptr.To("GPU-" + name)},
			},
		})
	}
	return s
}

func v1beta2Claim(namespace, name, request, class, pool string, devices ...string) *resourcev1beta2.ResourceClaim {
	c := &resourcev1beta2.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: resourcev1beta2.ResourceClaimSpec{Devices: resourcev1beta2.DeviceClaim{Requests: []resourcev1beta2.DeviceRequest{{
			Name: request, Exactly: &resourcev1beta2.ExactDeviceRequest{DeviceClassName: class, Count: int64(len(devices))},
		}}}},
	}
	if len(devices) > 0 {
		c.Status.Allocation = &resourcev1beta2.AllocationResult{}
		for _, d := range devices {
			c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, resourcev1beta2.DeviceRequestAllocationResult{
				Request: request, Driver: testDriver, Pool: pool, Device: d,
			})
		}
	}
	return c
}
