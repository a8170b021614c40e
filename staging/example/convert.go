// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/utils/ptr"
)

// Conversions from the API versions into the internal model (model.go).
// resource.k8s.io/v1 is decoded into the v1beta2 types (read.go) and takes
// the v1beta2 conversions.

// convertAll converts every item with convert, which takes a pointer.
func convertAll[T any, M any](items []T, convert func(*T) M) []M {
	out := make([]M, 0, len(items))
	for i := range items {
		out = append(out, convert(&items[i]))
	}
	return out
}

func classFromV1beta2(c *resourcev1beta2.DeviceClass) deviceClass {
	out := deviceClass{Name: c.Name, Created: c.CreationTimestamp.Time, ExtendedResourceName: ptr.Deref(c.Spec.ExtendedResourceName, "")}
	for _, s := range c.Spec.Selectors {
		if s.CEL != nil {
			out.Selectors = append(out.Selectors, s.CEL.Expression)
		}
	}
	return out
}

func classFromV1beta1(c *resourcev1beta1.DeviceClass) deviceClass {
	out := deviceClass{Name: c.Name, Created: c.CreationTimestamp.Time, ExtendedResourceName: ptr.Deref(c.Spec.ExtendedResourceName, "")}
	for _, s := range c.Spec.Selectors {
		if s.CEL != nil {
			out.Selectors = append(out.Selectors, s.CEL.Expression)
		}
	}
	return out
}

func sliceFromV1beta2(s *resourcev1beta2.ResourceSlice) resourceSlice {
	out := resourceSlice{
		Name:                   s.Name,
		Driver:                 s.Spec.Driver,
		Pool:                   s.Spec.Pool.Name,
		Generation:             s.Spec.Pool.Generation,
		NodeName:               ptr.Deref(s.Spec.NodeName, ""),
		AllNodes:               ptr.Deref(s.Spec.AllNodes, false),
		NodeSelector:           s.Spec.NodeSelector,
		PerDeviceNodeSelection: ptr.Deref(s.Spec.PerDeviceNodeSelection, false),
	}
	for _, d := range s.Spec.Devices {
		dev := device{
			Name:         d.Name,
			Attributes:   make(map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute, len(d.Attributes)),
			Capacity:     make(map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceCapacity, len(d.Capacity)),
			NodeName:     ptr.Deref(d.NodeName, ""),
			AllNodes:     ptr.Deref(d.AllNodes, false),
			NodeSelector: d.NodeSelector,
		}
		for name, a := range d.Attributes {
			dev.Attributes[resourcev1beta1.QualifiedName(name)] = resourcev1beta1.DeviceAttribute{
				IntValue: a.IntValue, BoolValue: a.BoolValue, StringValue: a.StringValue, VersionValue: a.VersionValue,
			}
		}
		for name, c := range d.Capacity {
			dev.Capacity[resourcev1beta1.QualifiedName(name)] = resourcev1beta1.DeviceCapacity{Value: c.Value}
		}
		out.Devices = append(out.Devices, dev)
	}
	return out
}

func sliceFromV1beta1(s *resourcev1beta1.ResourceSlice) resourceSlice {
	out := resourceSlice{
		Name:                   s.Name,
		Driver:                 s.Spec.Driver,
		Pool:                   s.Spec.Pool.Name,
		Generation:             s.Spec.Pool.Generation,
		NodeName:               s.Spec.NodeName,
		AllNodes:               s.Spec.AllNodes,
		NodeSelector:           s.Spec.NodeSelector,
		PerDeviceNodeSelection: ptr.Deref(s.Spec.PerDeviceNodeSelection, false),
	}
	for _, d := range s.Spec.Devices {
		dev := device{Name: d.Name}
		if b := d.Basic; b != nil {
			dev.Attributes, dev.Capacity = b.Attributes, b.Capacity
			dev.NodeName, dev.AllNodes, dev.NodeSelector = ptr.Deref(b.NodeName, ""), ptr.Deref(b.AllNodes, false), b.NodeSelector
		}
		out.Devices = append(out.Devices, dev)
	}
	return out
}

func claimFromV1beta2(c *resourcev1beta2.ResourceClaim) resourceClaim {
	out := resourceClaim{Namespace: c.Namespace, Name: c.Name, Requests: map[string]string{}}
	for _, r := range c.Spec.Devices.Requests {
		switch {
		case r.Exactly != nil:
			out.Requests[r.Name] = r.Exactly.DeviceClassName
		default:
			for _, sub := range r.FirstAvailable {
				out.Requests[r.Name+"/"+sub.Name] = sub.DeviceClassName
			}
		}
	}
	if a := c.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			out.Results = append(out.Results, allocationResult{
				Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device, AdminAccess: ptr.Deref(r.AdminAccess, false),
			})
		}
	}
	return out
}

func claimFromV1beta1(c *resourcev1beta1.ResourceClaim) resourceClaim {
	out := resourceClaim{Namespace: c.Namespace, Name: c.Name, Requests: map[string]string{}}
	for _, r := range c.Spec.Devices.Requests {
		if r.DeviceClassName != "" {
			out.Requests[r.Name] = r.DeviceClassName
		}
		for _, sub := range r.FirstAvailable {
			out.Requests[r.Name+"/"+sub.Name] = sub.DeviceClassName
		}
	}
	if a := c.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			out.Results = append(out.Results, allocationResult{
				Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device, AdminAccess: ptr.Deref(r.AdminAccess, false),
			})
		}
	}
	return out
}
