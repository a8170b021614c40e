// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// celCacheSize bounds the compiled CEL selectors kept for reuse.
const celCacheSize = 64

// inventory is what the ResourceSlices offer: the devices of the newest
// generation of each pool, which classes they match and which of them
// claims hold.
type inventory struct {
	devices []sliceDevice
	// byID finds a device by driver/pool/device.
	byID map[deviceID]int
	// matches: class name -> indexes of the devices that match all its
	// selectors.
	matches map[string][]int
	// allocated are the devices in some claim's allocation (admin access
	// excepted: it does not take the device).
	allocated map[deviceID]bool
	// warnings are selectors that failed to compile or evaluate; the
	// device does not match then, as the scheduler would not allocate it.
	warnings []string
}

// sliceDevice is a device with the node selection that applies to it.
type sliceDevice struct {
	id     deviceID
	device device
	// Where the device is available: its slice's selection, or its own
	// with perDeviceNodeSelection.
	nodeName     string
	allNodes     bool
	nodeSelector *v1.NodeSelector
}

// newInventory evaluates the selectors of every class against every device
// of the newest generation of each pool, with the DRA CEL library.
func newInventory(ctx context.Context, classes []deviceClass, rslices []resourceSlice, claims []resourceClaim) *inventory {
	inv := &inventory{byID: map[deviceID]int{}, matches: map[string][]int{}, allocated: map[deviceID]bool{}}
	// Only the newest generation of a pool counts: a driver updating a pool
	// writes its slices with a higher generation, and the scheduler ignores
	// the older ones.
	newest := map[[2]string]int64{}
	for _, s := range rslices {
		key := [2]string{s.Driver, s.Pool}
		if g, ok := newest[key]; !ok || s.Generation > g {
			newest[key] = s.Generation
		}
	}
	for _, s := range rslices {
		if s.Generation != newest[[2]string{s.Driver, s.Pool}] {
			continue
		}
		for _, d := range s.Devices {
			sd := sliceDevice{id: deviceID{s.Driver, s.Pool, d.Name}, device: d, nodeName: s.NodeName, allNodes: s.AllNodes, nodeSelector: s.NodeSelector}
			if s.PerDeviceNodeSelection {
				sd.nodeName, sd.allNodes, sd.nodeSelector = d.NodeName, d.AllNodes, d.NodeSelector
			}
			if _, dup := inv.byID[sd.id]; dup {
				inv.warnings = append(inv.warnings, fmt.Sprintf("device %s is published twice (ResourceSlice %s): counted once", sd.id, s.Name))
				continue
			}
			inv.byID[sd.id] = len(inv.devices)
			inv.devices = append(inv.devices, sd)
		}
	}
	cache := dracel.NewCache(celCacheSize)
	for _, class := range classes {
		programs := make([]dracel.CompilationResult, 0, len(class.Selectors))
		broken := false
		for _, expr := range class.Selectors {
			result := cache.GetOrCompile(expr)
			if result.Error != nil {
				inv.warnings = append(inv.warnings, fmt.Sprintf("DeviceClass %s: selector %q does not compile: %v; no device matches the class", class.Name, expr, result.Error))
				broken = true
				break
			}
			programs = append(programs, result)
		}
		if broken {
			inv.matches[class.Name] = nil
			continue
		}
		var matching []int
		for i, sd := range inv.devices {
			if inv.deviceMatches(ctx, class.Name, programs, sd) {
				matching = append(matching, i)
			}
		}
		inv.matches[class.Name] = matching
	}
	for _, c := range claims {
		for _, r := range c.Results {
			if !r.AdminAccess {
				inv.allocated[deviceID{r.Driver, r.Pool, r.Device}] = true
			}
		}
	}
	return inv
}

// deviceMatches evaluates the class's selectors on the device: all must be
// true.
func (inv *inventory) deviceMatches(ctx context.Context, class string, programs []dracel.CompilationResult, sd sliceDevice) bool {
	input := dracel.Device{Driver: sd.id.Driver, Attributes: sd.device.Attributes, Capacity: sd.device.Capacity}
	for _, p := range programs {
		ok, _, err := p.DeviceMatches(ctx, input)
		if err != nil {
			inv.warnings = append(inv.warnings, fmt.Sprintf("DeviceClass %s: selector %q on device %s: %v; the device does not match", class, p.Expression, sd.id, err))
			return false
		}
		if !ok {
			return false
		}
	}
	return true
}

// onNode tells whether the device is available on the node.
func (sd sliceDevice) onNode(node *v1.Node) (bool, error) {
	switch {
	case sd.allNodes:
		return true, nil
	case sd.nodeName != "":
		return sd.nodeName == node.Name, nil
	case sd.nodeSelector != nil:
		selector, err := nodeaffinity.NewNodeSelector(sd.nodeSelector)
		if err != nil {
			return false, fmt.Errorf("node selector of device %s: %w", sd.id, err)
		}
		return selector.Match(node), nil
	}
	return false, nil
}

// classOnNode counts the devices of the class on the node.
type classOnNode struct {
	devices   int64
	allocated int64
	drivers   []string
}

// forNode returns, per class, the matching devices available on the node.
func (inv *inventory) forNode(node *v1.Node) map[string]classOnNode {
	available := make([]bool, len(inv.devices))
	for i, sd := range inv.devices {
		ok, err := sd.onNode(node)
		if err != nil {
			inv.warnings = append(inv.warnings, err.Error())
		}
		available[i] = ok
	}
	out := map[string]classOnNode{}
	for class, matching := range inv.matches {
		var c classOnNode
		for _, i := range matching {
			if !available[i] {
				continue
			}
			c.devices++
			if inv.allocated[inv.devices[i].id] {
				c.allocated++
			}
			if !slices.Contains(c.drivers, inv.devices[i].id.Driver) {
				c.drivers = append(c.drivers, inv.devices[i].id.Driver)
			}
		}
		slices.Sort(c.drivers)
		if c.devices > 0 {
			out[class] = c
		}
	}
	return out
}

// lookup finds a device by its ID.
func (inv *inventory) lookup(id deviceID) (device, bool) {
	i, ok := inv.byID[id]
	if !ok {
		return device{}, false
	}
	return inv.devices[i].device, true
}
