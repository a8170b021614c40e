// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
)

// The internal model of the DRA objects that the plugin reads. Whatever API
// version the server offers (resource.k8s.io v1, v1beta2 or v1beta1, see
// read.go), the objects are converted into these types, so that the
// reports do not depend on the version. Device attributes and capacities
// keep the v1beta1 Go types, which the DRA CEL library
// (k8s.io/dynamic-resource-allocation/cel) evaluates.

// deviceClass is a DeviceClass.
type deviceClass struct {
	Name    string
	Created time.Time
	// ExtendedResourceName is spec.extendedResourceName, "" when unset.
	ExtendedResourceName string
	// Selectors are the CEL expressions of spec.selectors.
	Selectors []string
}

// resourceSlice is a ResourceSlice.
type resourceSlice struct {
	Name       string
	Driver     string
	Pool       string
	Generation int64
	// One of NodeName, AllNodes, NodeSelector and PerDeviceNodeSelection
	// says which nodes can use the devices.
	NodeName               string
	AllNodes               bool
	NodeSelector           *v1.NodeSelector
	PerDeviceNodeSelection bool
	Devices                []device
}

// device is a device of a ResourceSlice.
type device struct {
	Name       string
	Attributes map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute
	Capacity   map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceCapacity
	// The node selection of the device, when its slice has
	// perDeviceNodeSelection.
	NodeName     string
	AllNodes     bool
	NodeSelector *v1.NodeSelector
}

// resourceClaim is a ResourceClaim with what matters here: its requests and
// the devices allocated to it.
type resourceClaim struct {
	Namespace string
	Name      string
	// Requests maps the name of each request to its DeviceClass.
	Requests map[string]string
	// Results are status.allocation.devices.results (none when the claim
	// is not allocated).
	Results []allocationResult
}

// allocationResult is one allocated device of a claim.
type allocationResult struct {
	Request     string
	Driver      string
	Pool        string
	Device      string
	AdminAccess bool
}

// deviceID names a device the way allocation results do.
type deviceID struct {
	Driver, Pool, Device string
}

func (id deviceID) String() string { return id.Driver + "/" + id.Pool + "/" + id.Device }

// uuidAttribute is the device attribute that holds a device's UUID (the
// example driver and NVIDIA's publish it).
const uuidAttribute = "uuid"

// uuid is the device's "uuid" attribute, "" when it has none. An attribute
// name without a domain is in the driver's domain, so the fully qualified
// "<driver>/uuid" is the same attribute.
func (d device) uuid(driver string) string {
	for _, name := range []resourcev1beta1.QualifiedName{uuidAttribute, resourcev1beta1.QualifiedName(driver + "/" + uuidAttribute)} {
		if a, ok := d.Attributes[name]; ok && a.StringValue != nil {
			return *a.StringValue
		}
	}
	return ""
}
